#!/usr/bin/env python3
"""The generator arguments that load an autoscheduler plugin and select it,
in the protocol of the Halide the plugin was built for: the Python (and, as
a command, the shell) side of tuner/generate/generator_protocol.h, so every script
under benchmarks/ and costmodel/tools speaks Halide 14, 19 and 21 alike.

An autoscheduler plugin loads only into the Halide it was linked with, so
that Halide's major version is read from the plugin itself (its
libHalide19.so.0 or libHalide.so.19 dependency): no flag to keep in step with the build.

  halide_generator_args.py PLUGIN NAME [KEY=VALUE ...]
      prints the arguments, one per line (for shell scripts)
"""
import functools
import re
import sys


@functools.lru_cache(maxsize=None)  # read once per plugin, not once per generator run
def halide_major(plugin):
    """Halide's major version that the plugin (a shared library) links."""
    try:
        with open(plugin, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"{plugin}: cannot read the plugin: {e.strerror}")
    # Debian names the library libHalide19.so.0; Halide's own builds, libHalide.so.19.
    found = set(int(a or b) for a, b in re.findall(rb"libHalide(\d+)\.so|libHalide\.so\.(\d+)", data))
    if len(found) != 1:
        sys.exit(f"{plugin}: links {'no' if not found else 'several'} libHalide (libHalideN.so or "
                 "libHalide.so.N); is it an autoscheduler plugin?")
    return found.pop()


def autoscheduler_args(major, name, options=None):
    """Arguments selecting autoscheduler `name` (already loaded) with
    `options`: Halide 14's `-s NAME auto_schedule=true` (which takes no
    options on the command line), or `autoscheduler=NAME` and
    `autoscheduler.KEY=VALUE` from Halide 16 on."""
    options = options or {}
    if major < 16:
        if options:
            sys.exit(f"Halide {major} takes no autoscheduler options on a generator's command line")
        return ["-s", name, "auto_schedule=true"]
    return [f"autoscheduler={name}"] + [f"autoscheduler.{k}={v}" for k, v in options.items()]


def select_plugin(plugin, name, options=None):
    """`-p PLUGIN` and the arguments that select `name` from it."""
    return ["-p", plugin] + autoscheduler_args(halide_major(plugin), name, options)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: halide_generator_args.py PLUGIN NAME [KEY=VALUE ...]")
    opts = dict(kv.split("=", 1) for kv in sys.argv[3:])
    print("\n".join(select_plugin(sys.argv[1], sys.argv[2], opts)))

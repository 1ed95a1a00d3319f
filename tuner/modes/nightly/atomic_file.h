#pragma once
// Files that are either the old version or the new one, never half of
// either: written next to their destination under a temporary name, synced,
// then renamed over it (rename(2) is atomic within a file system), and the
// folder synced so the rename itself survives a power cut. What the
// promotion into the schedule folder and its manifest rely on.

#include <string>

namespace gpusched {

// Throws UserError naming the path when it cannot be written.
void write_file_atomically(const std::string &path, const std::string &bytes);
void copy_file_atomically(const std::string &from, const std::string &to);

} // namespace gpusched

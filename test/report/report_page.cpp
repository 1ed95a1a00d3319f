#include "report_page.h"

namespace gpusched::test {

std::size_t count(const std::string &text, const std::string &needle) {
    std::size_t n = 0;
    for (std::size_t pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + needle.size()))
        ++n;
    return n;
}

std::vector<std::string> elements(const std::string &text, const std::string &open_prefix,
                                  const std::string &close) {
    std::vector<std::string> out;
    std::size_t pos = text.find(open_prefix);
    while (pos != std::string::npos) {
        const std::size_t end = text.find(close, pos);
        if (end == std::string::npos) break;
        out.push_back(text.substr(pos, end + close.size() - pos));
        pos = text.find(open_prefix, end);
    }
    return out;
}

std::string attribute(const std::string &element, const std::string &name) {
    const std::size_t tag_end = element.find('>');
    const std::string tag = element.substr(0, tag_end);
    const std::string key = " " + name + "=\"";
    const std::size_t pos = tag.find(key);
    if (pos == std::string::npos) return "";
    const std::size_t start = pos + key.size();
    return tag.substr(start, tag.find('"', start) - start);
}

std::string group_section(const std::string &html, const std::string &pipeline,
                          const std::string &device_escaped) {
    for (const std::string &s : elements(html, "<section class=\"card group\"", "</section>"))
        if (attribute(s, "data-pipeline") == pipeline && attribute(s, "data-device") == device_escaped)
            return s;
    return "";
}

std::vector<std::string> plots(const std::string &text, const std::string &kind) {
    std::vector<std::string> out;
    for (const std::string &svg : elements(text, "<svg ", "</svg>"))
        if (attribute(svg, "data-kind") == kind) out.push_back(svg);
    return out;
}

} // namespace gpusched::test

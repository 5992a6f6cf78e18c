// Command-line options of the benchmark programs: every option takes one value; --help prints the usage;
// anything else is a usage error (exit 2), so that a mistyped flag never starts a long run with defaults.
// Hand-written rather than CLI11 because the benchmarks build in the engine-only configuration too.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace orrery::bench {

struct BenchOption {
    std::string name;  // "--k"
    std::string help;  // "fat-tree radix (default 60)"
};

// Returns option -> value for the options given; exits on --help (0) or on a usage error (2).
inline std::map<std::string, std::string> parse_bench_args(int argc, char** argv, const std::string& summary,
                                                           const std::vector<BenchOption>& options) {
    auto usage = [&](std::FILE* to) {
        std::fprintf(to, "%s\nUsage: %s", summary.c_str(), argv[0]);
        for (const BenchOption& o : options) std::fprintf(to, " [%s VALUE]", o.name.c_str());
        std::fprintf(to, "\n");
        for (const BenchOption& o : options) std::fprintf(to, "  %-12s %s\n", o.name.c_str(), o.help.c_str());
    };
    std::map<std::string, std::string> values;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            usage(stdout);
            std::exit(0);
        }
        bool known = false;
        for (const BenchOption& o : options) known = known || o.name == arg;
        if (!known || i + 1 >= argc) {
            std::fprintf(stderr, "%s: %s\n", argv[0],
                         known ? ("option " + arg + " needs a value").c_str() : ("unknown argument: " + arg).c_str());
            usage(stderr);
            std::exit(2);
        }
        values[arg] = argv[++i];
    }
    return values;
}

// A comma-separated option's values, each one of `allowed`, or a usage error naming the option.
inline std::vector<std::string> bench_choices(const std::map<std::string, std::string>& values, const std::string& name, const std::string& fallback,
                                              const std::vector<std::string>& allowed) {
    std::vector<std::string> out;
    auto it = values.find(name);
    for (std::string list = it == values.end() ? fallback : it->second; !list.empty();) {
        const size_t comma = list.find(',');
        out.push_back(list.substr(0, comma));
        list = comma == std::string::npos ? "" : list.substr(comma + 1);
        if (std::find(allowed.begin(), allowed.end(), out.back()) == allowed.end()) {
            std::string names;
            for (const std::string& a : allowed) {
                if (!names.empty()) names += ", ";
                names += a;
            }
            std::fprintf(stderr, "option %s: one or more of %s, comma-separated, not '%s'\n", name.c_str(), names.c_str(), out.back().c_str());
            std::exit(2);
        }
    }
    return out;
}

// A numeric option's value, or a usage error naming the option.
inline long long bench_number(const std::map<std::string, std::string>& values, const std::string& name,
                              long long fallback) {
    auto it = values.find(name);
    if (it == values.end()) return fallback;
    char* end = nullptr;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0' || v <= 0) {
        std::fprintf(stderr, "option %s: expected a positive integer, found '%s'\n", name.c_str(), it->second.c_str());
        std::exit(2);
    }
    return v;
}

}  // namespace orrery::bench

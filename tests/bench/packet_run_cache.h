// A packet-level run's figures kept on disk between bench_skip processes (--packet-cache DIR), so that a change to
// the skipper can be measured against the packet level under several seeds without running the packet level again
// (MoE 32x22B: 7-8 minutes per seed on two threads, against under two with skipping).
//
// The file is named by the SHA-256 of the scenario document, so another row, stop, CC or seed is another file. It
// cannot know whether the engine's packet level has changed since it was written: it records the revision that wrote
// it, and the bench prints that revision with every figure it takes from the file. Delete the folder after any change
// that moves the packet level's results.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace orrery::bench {

struct PacketRunFigures {
    std::string revision;  // git_revision() of the process that ran it
    std::string document;  // the scenario document, as dumped
    double wall = 0, prepare = 0, iteration_s = 0;  // s
    uint64_t events = 0, steps = 0, split_steps = 0;
    std::vector<double> fct;      // ps per flow row, -1 unfinished
    std::vector<int64_t> start;   // ps per flow row
    std::vector<uint64_t> size;   // bytes per flow row
};

namespace packet_cache_detail {
inline constexpr char kMagic[16] = "orrery-pktrun-1";

template <typename T>
void put(std::FILE* f, const T& v) { std::fwrite(&v, sizeof v, 1, f); }
inline void put_text(std::FILE* f, const std::string& s) {
    put<uint64_t>(f, s.size());
    std::fwrite(s.data(), 1, s.size(), f);
}
template <typename T>
void put_column(std::FILE* f, const std::vector<T>& v) {
    put<uint64_t>(f, v.size());
    std::fwrite(v.data(), sizeof(T), v.size(), f);
}

struct Reader {
    std::FILE* f;
    const std::filesystem::path& path;
    void bytes(void* to, size_t n) {
        if (n && std::fread(to, 1, n, f) != n) throw std::runtime_error(path.string() + ": truncated packet-level run (delete it to run the packet level again)");
    }
    template <typename T>
    T get() {
        T v{};
        bytes(&v, sizeof v);
        return v;
    }
    std::string text() {
        std::string s(get<uint64_t>(), '\0');
        bytes(s.data(), s.size());
        return s;
    }
    template <typename T>
    std::vector<T> column(uint64_t rows) {
        if (get<uint64_t>() != rows) throw std::runtime_error(path.string() + ": its columns differ in length (delete it to run the packet level again)");
        std::vector<T> v(rows);
        bytes(v.data(), rows * sizeof(T));
        return v;
    }
};
}  // namespace packet_cache_detail

inline void save_packet_run(const std::filesystem::path& file, const PacketRunFigures& r) {
    using namespace packet_cache_detail;
    const std::filesystem::path partial = file.string() + ".partial";  // renamed whole, so a reader never sees half a file
    std::FILE* f = std::fopen(partial.c_str(), "wb");
    if (!f) throw std::runtime_error(partial.string() + ": cannot write the packet-level run");
    std::fwrite(kMagic, 1, sizeof kMagic, f);
    put_text(f, r.revision);
    put_text(f, r.document);
    for (double v : {r.wall, r.prepare, r.iteration_s}) put(f, v);
    for (uint64_t v : {r.events, r.steps, r.split_steps}) put(f, v);
    put<uint64_t>(f, r.fct.size());
    put_column(f, r.fct), put_column(f, r.start), put_column(f, r.size);
    const bool written = std::ferror(f) == 0;
    if (std::fclose(f) != 0 || !written) throw std::runtime_error(partial.string() + ": writing the packet-level run failed");
    std::filesystem::rename(partial, file);
}

// The run stored for `document`, or nothing when the file does not exist; an error when it is not a whole run of
// that very document.
inline std::optional<PacketRunFigures> load_packet_run(const std::filesystem::path& file, const std::string& document) {
    using namespace packet_cache_detail;
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (!f) return std::nullopt;
    Reader in{f, file};
    PacketRunFigures r;
    try {
        char magic[sizeof kMagic];
        in.bytes(magic, sizeof magic);
        if (std::string(magic, sizeof magic) != std::string(kMagic, sizeof kMagic))
            throw std::runtime_error(file.string() + ": not a packet-level run written by bench_skip");
        r.revision = in.text();
        r.document = in.text();
        if (r.document != document) throw std::runtime_error(file.string() + ": stored for another scenario document than its name says (delete it)");
        r.wall = in.get<double>(), r.prepare = in.get<double>(), r.iteration_s = in.get<double>();
        r.events = in.get<uint64_t>(), r.steps = in.get<uint64_t>(), r.split_steps = in.get<uint64_t>();
        const uint64_t rows = in.get<uint64_t>();
        r.fct = in.column<double>(rows), r.start = in.column<int64_t>(rows), r.size = in.column<uint64_t>(rows);
    } catch (...) {
        std::fclose(f);
        throw;
    }
    std::fclose(f);
    return r;
}

}  // namespace orrery::bench

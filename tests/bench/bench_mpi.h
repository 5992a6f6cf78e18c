#pragma once
// Shared by the MPI benchmarks (bench_mpi_sweep, bench_partition): timing `orrery-cli run` under mpirun, and
// what two runs must agree on in their results stores.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace orrery::bench {

inline std::string read_text(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The best process wall (s) of `repeats` runs of `mpirun --oversubscribe -n ranks orrery-cli run ARGS --out STORE`
// in `dir`, the store removed before each; stderr goes to STORE.log. Exits the benchmark when a run fails.
inline double best_mpirun_wall(const std::filesystem::path& dir, int ranks, const std::string& args, const std::string& store, int repeats) {
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
        std::filesystem::remove(dir / store);
        const std::string command = "cd '" + dir.string() + "' && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + ORRERY_MPIEXEC +
                                    " --oversubscribe -n " + std::to_string(ranks) + " '" + ORRERY_CLI + "' run " + args + " --out " + store + " 2>" +
                                    store + ".log";
        const auto t0 = std::chrono::steady_clock::now();
        if (std::system(command.c_str()) != 0) {
            std::fprintf(stderr, "failed: %s\n%s", command.c_str(), read_text(dir / (store + ".log")).c_str());
            std::exit(1);
        }
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

// Every flow's finish and every experiment's status, events and packet-hops, as text rows in a fixed order.
inline std::vector<std::string> store_rows(const std::filesystem::path& store) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(store.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    std::vector<std::string> out;
    auto each = [&](const std::string& sql) {
        sqlite3_stmt* s = nullptr;
        sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
        while (sqlite3_step(s) == SQLITE_ROW) {
            std::string row;
            for (int c = 0; c < sqlite3_column_count(s); ++c) {
                const unsigned char* t = sqlite3_column_text(s, c);
                row += t ? reinterpret_cast<const char*>(t) : "NULL";
                row += '|';
            }
            out.push_back(row);
        }
        sqlite3_finalize(s);
    };
    each("SELECT experiment, flow, finish_ps FROM flows ORDER BY experiment, flow");
    each("SELECT experiment, status, events, packet_hops FROM experiments ORDER BY experiment");
    sqlite3_close(db);
    return out;
}

}  // namespace orrery::bench

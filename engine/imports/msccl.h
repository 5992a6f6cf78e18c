#pragma once
// Custom collective algorithms from MSCCL XML (msccl-tools' <algo><gpu><tb><step> layout, and its newer
// <op> layout) and MSCCL++ execution-plan JSON, reduced to engine/workload/custom_algorithm.h: which GPU
// moves how many chunks to whom after what. Receives are matched to sends in order per (sender, receiver,
// channel); an MSCCL++ read of a buffer waits for the peers' writes into those chunks, a `wait` for the
// peer's matching `signal`. Errors name the file and the XML line or the JSON path.
#include <filesystem>
#include <string>

#include "common/diagnostics.h"
#include "workload/custom_algorithm.h"

namespace orrery {

CustomAlgorithm read_msccl_xml(const std::string& text, const std::string& source, Diagnostics& warnings);
CustomAlgorithm read_mscclpp_json(const std::string& text, const std::string& source, Diagnostics& warnings);
// By extension: .xml → MSCCL, .json → MSCCL++.
CustomAlgorithm read_custom_algorithm(const std::filesystem::path& file, Diagnostics& warnings);

}  // namespace orrery

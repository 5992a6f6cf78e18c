#pragma once
// From a validated Scenario to the things the engine runs on: the fabric, and the checks that need it.
#include <string>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "scenario/scenario.h"
#include "topology/fabric.h"

namespace orrery {

// Generates, copies or imports the fabric. Throws InputError (naming file and line) for imported files.
Fabric build_fabric(const TopologySpec& spec);

// Flows must join existing hosts that can reach each other; with ECN on, every switch port's link rate
// needs thresholds (the reference refuses to start otherwise).
void check_against_fabric(const Scenario& s, const Fabric& f, Diagnostics& diags);
// Its part for a model-built LLM job: the job's rules as errors (check_llm_workload) and TP groups that span
// NVLink domains as a warning.
void check_llm_against_fabric(const Scenario& s, const Fabric& f, Diagnostics& diags);

// The flows of the workload: the inline list, or the HPCC flow file it names.
std::vector<FlowSpec> workload_flows(const Scenario& s);

std::string sha256_of_document(const nlohmann::json& resolved_document);

}  // namespace orrery

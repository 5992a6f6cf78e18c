#pragma once
// Every congestion control's parameters, declared once: each row generates the field of the CC's params struct
// (scenario.h, with its default), the key the scenario reader asks for in the CC's object of the "cc" section
// (scenario/read.cpp), the row of the workbench's Network & CC form (views/editors/network_editor.cpp), the
// reference's config.txt key (io/hpcc_config.cpp) and the field of the CC's engine form, `<Name>Config`, that
// its hooks read as `ep.<cc>.<member>` (ExperimentParams, net/state.h; filled by runtime/batch_compile.cpp's
// make_params, which converts each kind as the engine counts it: rate bit/s, time ps rounded as ns-3's
// MicroSeconds(double) rounds, integer unsigned). What the engine does with a value is the CC's own code.
//
// X(cc, type, member, default, kind, min, max, reference key, label)
//   cc         the CC's name in net/cc_list.h; its params struct is CcSpec::<cc>, read from "cc": {"<cc>": {…}}
//   kind       rate, time (strings with units), number or integer (within [min, max]), boolean
//   label      the form's row; empty: read and compiled, not offered in the form
#define ORRERY_CC_PARAMS_Dcqcn(X)                                                                                                   \
    X(dcqcn, BitsPerSecond, rate_ai, {20'000'000}, rate, 0, 0, "RATE_AI", "Additive increase")                                  \
    X(dcqcn, BitsPerSecond, rate_hai, {200'000'000}, rate, 0, 0, "RATE_HAI", "Hyper additive increase")                         \
    X(dcqcn, Picoseconds, alpha_resume_interval, {1'000'000}, time, 0, 0, "ALPHA_RESUME_INTERVAL", "Alpha update interval")      \
    X(dcqcn, Picoseconds, rate_decrease_interval, {4'000'000}, time, 0, 0, "RATE_DECREASE_INTERVAL", "Rate decrease interval")  \
    X(dcqcn, Picoseconds, rp_timer, {300'000'000}, time, 0, 0, "RP_TIMER", "Rate increase timer")                               \
    X(dcqcn, double, g, {1.0 / 256}, number, 0.0, 1.0, "EWMA_GAIN", "EWMA gain g")                                              \
    X(dcqcn, int, fast_recovery_times, {1}, integer, 0, 1000, "FAST_RECOVERY_TIMES", "Fast recovery stages")                    \
    X(dcqcn, bool, clamp_target_rate, {false}, boolean, 0, 0, "CLAMP_TARGET_RATE", "Clamp target rate")

#define ORRERY_CC_PARAMS_Hpcc(X)                                                                                          \
    X(hpcc, double, eta, {0.95}, number, 0.01, 1.0, "U_TARGET", "Target utilisation η")                               \
    X(hpcc, int, mi_thresh, {0}, integer, 0, 1000, "MI_THRESH", "Additive-increase stages (maxStage)")                \
    X(hpcc, BitsPerSecond, rate_ai, {40'000'000}, rate, 0, 0, "RATE_AI", "Additive increase")                         \
    X(hpcc, bool, fast_react, {true}, boolean, 0, 0, "FAST_REACT", "Fast reaction (per ACK)")                         \
    X(hpcc, bool, multi_rate, {false}, boolean, 0, 0, "MULTI_RATE", "Per-hop rates")                                  \
    X(hpcc, bool, sample_feedback, {false}, boolean, 0, 0, "SAMPLE_FEEDBACK", "Sampled feedback")                     \
    X(hpcc, int, int_multi, {4}, integer, 1, 1024, "INT_MULTI", "INT multiplier")

// TIMELY's g is the reference's EWMA_GAIN, which its TIMELY does not read: kept for config.txt, not in the form.
#define ORRERY_CC_PARAMS_Timely(X)                                                                                        \
    X(timely, BitsPerSecond, rate_ai, {100'000'000}, rate, 0, 0, "RATE_AI", "Additive increase")                      \
    X(timely, BitsPerSecond, rate_hai, {500'000'000}, rate, 0, 0, "RATE_HAI", "Hyper additive increase")              \
    X(timely, double, alpha, {0.875}, number, 0.0, 1.0, "", "RTT-gradient EWMA α")                                     \
    X(timely, double, beta, {0.8}, number, 0.0, 1.0, "", "Multiplicative decrease β")                                  \
    X(timely, Picoseconds, t_low, {50'000'000}, time, 0, 0, "", "T_low")                                              \
    X(timely, Picoseconds, t_high, {500'000'000}, time, 0, 0, "", "T_high")                                           \
    X(timely, Picoseconds, min_rtt, {20'000'000}, time, 0, 0, "", "Minimum RTT")                                      \
    X(timely, double, g, {1.0 / 256}, number, 0.0, 1.0, "EWMA_GAIN", "")

#define ORRERY_CC_PARAMS_Dctcp(X)                                                                         \
    X(dctcp, BitsPerSecond, rate_ai, {615'000'000}, rate, 0, 0, "DCTCP_RATE_AI", "Additive increase") \
    X(dctcp, double, g, {1.0 / 16}, number, 0.0, 1.0, "EWMA_GAIN", "EWMA gain g")

// No congestion control: a rate the sender keeps whatever the network says (0: its line rate).
#define ORRERY_CC_PARAMS_Fixed(X) X(fixed, BitsPerSecond, rate, {0}, rate, 0, 0, "", "Fixed rate (0: line rate)")

// Every CC's rows, in the order the reader asks for them and the form lists them. A new CC with parameters
// defines its ORRERY_CC_PARAMS_<Name> (the name of its row in net/cc_list.h) and adds it here.
#define ORRERY_CC_PARAMS(X) ORRERY_CC_PARAMS_Dcqcn(X) ORRERY_CC_PARAMS_Hpcc(X) ORRERY_CC_PARAMS_Timely(X) ORRERY_CC_PARAMS_Dctcp(X) \
    ORRERY_CC_PARAMS_Fixed(X)

// Each CC's params struct, `<Name>Params` with a field per row and its default, and its member of CcSpec,
// named after the CC (scenario.h expands these over net/cc_list.h).
#define ORRERY_CC_PARAM_FIELD(cc, type, member, value, ...) type member value;
#define ORRERY_CC_PARAMS_STRUCT(Name, ...) \
    struct Name##Params {                  \
        ORRERY_CC_PARAMS_##Name(ORRERY_CC_PARAM_FIELD)   \
    };
#define ORRERY_CC_PARAMS_MEMBER(Name, name, ...) Name##Params name;

// Each CC's engine form, `<Name>Config`, a plain struct the device copies with ExperimentParams, and its member
// of ExperimentParams, named after the CC (net/state.h expands these over net/cc_list.h).
#define ORRERY_CC_ENGINE_TYPE_rate uint64_t
#define ORRERY_CC_ENGINE_TYPE_time int64_t
#define ORRERY_CC_ENGINE_TYPE_number double
#define ORRERY_CC_ENGINE_TYPE_integer uint32_t
#define ORRERY_CC_ENGINE_TYPE_boolean bool
#define ORRERY_CC_ENGINE_FIELD(cc, type, member, value, kind, ...) ORRERY_CC_ENGINE_TYPE_##kind member{};
#define ORRERY_CC_CONFIG_STRUCT(Name, ...)                   \
    struct Name##Config {                                    \
        ORRERY_CC_PARAMS_##Name(ORRERY_CC_ENGINE_FIELD)      \
    };
#define ORRERY_CC_CONFIG_MEMBER(Name, name, ...) Name##Config name;

// The twelve single-rank recipes of the CPU corpus (tests/gpu/cpu_corpus.sh),
// recorded in tests/data/cpu-corpus and again, with page-fault counts, in
// tests/data/cpu-faults: the files of recording X are X_et, X_kineto and
// X_kineto_light.
#ifndef TESTS_FIDELITY_CPU_CORPUS_RECIPES_H_
#define TESTS_FIDELITY_CPU_CORPUS_RECIPES_H_

namespace et::sim {

inline constexpr const char* kCpuCorpusSingles[] = {
    "cpu_mlp_w64",  "cpu_mlp_w256", "cpu_mlp_w1024", "cpu_gpt_w64",
    "cpu_gpt_w256", "cpu_gpt_w512", "cpu_conv_w16",  "cpu_conv_w32",
    "cpu_moe_w64",  "cpu_moe_w128", "cpu_rnn_w128",  "cpu_rnn_w512"};

}  // namespace et::sim

#endif  // TESTS_FIDELITY_CPU_CORPUS_RECIPES_H_

# bench-model's long-context options (issue 38) on the shipped target, CPU, small contexts
# (included from tests/CMakeLists.txt, which defines mlaspec_cli_test and mlaspec_cli_refusals).
set(lc_target ${PROJECT_SOURCE_DIR}/models/target)

# Two KV dtypes, the context made by the writer past max_position_embeddings, the speculative
# columns at a given tau, and batch 8 skipped by the memory limit with the bytes it needs.
mlaspec_cli_test(bench_model_long_context_cpu ok
  "bf16 KV, context 2048, batch up to 1: context by writer in [0-9.]+ s.*fp8 KV, context 2048, batch up to 1: context by writer.*accept length tau = 4.50.*\\| decode \\| 8 \\| 1 \\| 2048 \\| skipped: needs [0-9.]+ MB \\(KV [0-9.]+ MB for 8 x 2056 tokens of bf16 \\+ workspace 0.0 MB\\), 50.0 MB available.*\\| verify \\| 1 \\| 8 \\| 2048 \\| [0-9.]+ \\| [0-9]+ \\|[^\n]*\\| bf16 \\| cpu_reference \\| writer \\| [0-9.]+ \\| [0-9]+ \\|.*\\| verify \\| 1 \\| 8 \\| 2048 \\| [0-9.]+ \\|[^\n]*\\| fp8 \\| cpu_reference \\| writer \\|"
  REJECT "nan|inf \\||inf%|error"
  bench-model --model ${lc_target} --context 2k --batch 1,8 --q-len 8 --reps 1 --prefill 0
  --kv bf16,fp8 --fill writer --accept-length 4.5 --beyond-max-position --mem-limit-gb 0.05)

# Two policies in one load: each one's rows on the same context (the skipped batch too), named in
# the served-by cell.
mlaspec_cli_test(bench_model_two_policies ok
  "attention auto, cpu_reference.*\\| decode \\| 8 \\| 1 \\| 2048 \\| skipped: [^\n]*\\| bf16 \\| auto: \\|.*\\| decode \\| 8 \\| 1 \\| 2048 \\| skipped: [^\n]*\\| bf16 \\| cpu_reference: \\|.*\\| verify \\| 1 \\| 8 \\| 2048 \\|[^\n]*\\| bf16 \\| auto: cpu_reference \\| writer \\|.*\\| verify \\| 1 \\| 8 \\| 2048 \\|[^\n]*\\| bf16 \\| cpu_reference: cpu_reference \\| writer \\|"
  REJECT "nan|inf \\||inf%|error"
  bench-model --model ${lc_target} --context 2k --batch 1,8 --q-len 8 --reps 1 --prefill 0
  --fill writer --beyond-max-position --mem-limit-gb 0.05 --attention auto,cpu_reference)

# Each bad value is refused before the load, naming it (exit 2).
mlaspec_cli_refusals(bench-model
  "bench_model_attention_unknown|--model;${lc_target};--attention;nope|--attention nope: not auto or a backend \\(cpu_reference, cuda_fold, cuda_rowwise\\)"
  "bench_model_context_negative|--model;${lc_target};--context;-1|--context -1: expected a token count >= 0"
  "bench_model_context_not_a_count|--model;${lc_target};--context;4k,12x|--context 12x: expected a token count"
  "bench_model_kv_unknown|--model;${lc_target};--kv;int4|--kv int4: not bf16 or fp8"
  "bench_model_fill_unknown|--model;${lc_target};--fill;fast|--fill fast: not auto, prefill or writer"
  "bench_model_accept_length_below_one|--model;${lc_target};--accept-length;0.5|--accept-length 0.5: below 1"
  "bench_model_beyond_context_hint|--model;${lc_target};--context;2k|exceeds the model's context of 1024 tokens \\(--beyond-max-position times such steps anyway\\)")

# scripts/long_context.py's table and crossover on made-up rows (Python's standard library; the
# PNG only where matplotlib is importable).
find_program(MLASPEC_PYTHON3 python3)
if(MLASPEC_PYTHON3)
  add_test(NAME scripts.long_context_report
           COMMAND ${MLASPEC_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/tools/long_context_report_test.py)
  set_tests_properties(scripts.long_context_report PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "all checks passed")
endif()

# The script end to end on the CPU (the arguments it gives bench-model, the report from its JSON):
# the shipped target, one small context past max_position_embeddings, tau given (no eval).
if(MLASPEC_PYTHON3)
  add_test(NAME scripts.long_context_cpu_run
           COMMAND ${MLASPEC_PYTHON3} -B ${PROJECT_SOURCE_DIR}/scripts/long_context.py
                   --mlaspec $<TARGET_FILE:mlaspec> --device cpu --models target --kv fp8
                   --policies auto,cpu_reference --contexts 2k --batches 1,2 --reps 1
                   --accept-length 4.5 --fill writer --budget 60 --out ${CMAKE_CURRENT_BINARY_DIR}/long_context_cpu
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(scripts.long_context_cpu_run PROPERTIES LABELS cpu
    ENVIRONMENT MLASPEC_LOG=warn
    PASS_REGULAR_EXPRESSION "## target, fp8 KV.*\\| 2 \\| 2k \\| writer \\| [0-9.]+ \\| [0-9.]+ \\(cpu_reference\\) \\| - \\| - \\|")
endif()

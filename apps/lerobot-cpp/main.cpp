// lerobot-cpp: dispatches to a subcommand and maps errors to exit codes (see common/error.h).
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <cstdio>
#include <iostream>

#include "lerobot/hub/policy_models.h"
#include "commands.h"
#include "lerobot/common/error.h"
#include "lerobot/common/host_allocator.h"
#include "lerobot/common/version.h"

namespace {

const char* kUsage = R"(lerobot-cpp: train, evaluate and inspect LeRobot policies and datasets, natively.

usage: lerobot-cpp <command> [--flag=value ...]

commands:
  train      train a policy (LeRobot's lerobot-train flags; --num_processes=N for data parallelism)
  eval       evaluate a trained policy in a built-in simulated task (lerobot-eval flags)
  dataset    info | validate | stats | generate: inspect, check or create LeRobot datasets
  estimate   estimate memory and time of a training run
  infer      run a pretrained policy on one observation file (safetensors), print its actions
  export     --merge_adapters=true: a LoRA (--peft.*) checkpoint as a plain policy, adapters folded in

Run 'lerobot-cpp <command> --help' for the flags of a command; 'lerobot-cpp --version' for the version.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace lerobot;
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    std::cout << kUsage;
    return words.empty() ? 2 : 0;
  }
  if (words[0] == "--version" || words[0] == "version") {
    std::cout << "lerobot-cpp " << kLerobotCppVersion << " (LibTorch " << TORCH_VERSION << "; " << kDatasetVersions
              << "; " << kLerobotReference << ")\n";
    return 0;
  }
  const std::string command = words[0];
  tune_host_allocator();  // before any thread starts: freed tensors are reused, not faulted in again
  install_hub_model_resolver();  // models policies build on by Hub id (SmolVLA's backbone)
  const app::Args args(words.begin() + 1, words.end());
  try {
    if (command == "train") return app::train_main(args);
    if (command == "eval") return app::eval_main(args);
    if (command == "dataset") return app::dataset_main(args);
    if (command == "estimate") return app::estimate_main(args);
    if (command == "infer") return app::infer_main(args);
    if (command == "export") return app::export_main(args);
    std::cerr << "error: unknown command '" << command << "'\n\n" << kUsage;
    return 2;
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return static_cast<int>(e.kind());
  } catch (const c10::Error& e) {
    std::cerr << "error (LibTorch): " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

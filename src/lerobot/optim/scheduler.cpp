// LambdaLR-equivalent scheduler, its λ functions and scheduler_state.json I/O.
#include "lerobot/optim/scheduler.h"

#include <algorithm>
#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/optim/optimizer.h"

namespace lerobot {

namespace {
constexpr double kPi = 3.14159265358979323846;  // math.pi

double warmup_factor(int64_t s, int64_t w) {
  return static_cast<double>(s) / static_cast<double>(std::max<int64_t>(1, w));
}
}  // namespace

LrLambda diffusers_lambda(const std::string& name, int64_t w, int64_t t, double lr_init) {
  if (name == "constant") return [](int64_t) { return 1.0; };
  if (name == "constant_with_warmup")
    return [w](int64_t s) { return s < w ? warmup_factor(s, w) : 1.0; };
  if (name == "linear")
    return [w, t](int64_t s) {
      if (s < w) return warmup_factor(s, w);
      return std::max(0.0, static_cast<double>(t - s) /
                               static_cast<double>(std::max<int64_t>(1, t - w)));
    };
  if (name == "cosine")
    return [w, t](int64_t s) {
      if (s < w) return warmup_factor(s, w);
      const double progress =
          static_cast<double>(s - w) / static_cast<double>(std::max<int64_t>(1, t - w));
      // diffusers: 0.5 * (1 + cos(pi * float(num_cycles) * 2.0 * progress)), num_cycles = 0.5
      return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * 0.5 * 2.0 * progress)));
    };
  if (name == "cosine_with_restarts")  // get_scheduler passes num_cycles=1: hard restarts, one cycle
    return [w, t](int64_t s) {
      if (s < w) return warmup_factor(s, w);
      const double progress =
          static_cast<double>(s - w) / static_cast<double>(std::max<int64_t>(1, t - w));
      if (progress >= 1.0) return 0.0;
      return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * std::fmod(1.0 * progress, 1.0))));
    };
  if (name == "polynomial") {  // get_scheduler: power 1.0, lr_end 1e-7, relative to the optimizer's lr
    constexpr double kLrEnd = 1e-7, kPower = 1.0;
    if (!(lr_init > kLrEnd))
      throw_usage("the polynomial schedule decays to lr_end=1e-07, which must be smaller than the initial lr (" +
                      std::to_string(lr_init) + ")",
                  "--optimizer.lr", "raise --optimizer.lr above 1e-07 or pick another --scheduler.name");
    return [w, t, lr_init](int64_t s) {
      if (s < w) return warmup_factor(s, w);
      if (s > t) return kLrEnd / lr_init;
      const double remaining =
          1.0 - static_cast<double>(s - w) / static_cast<double>(std::max<int64_t>(1, t - w));
      return ((lr_init - kLrEnd) * std::pow(remaining, kPower) + kLrEnd) / lr_init;
    };
  }
  throw_usage("unknown diffusers scheduler name '" + name + "'", "--scheduler.name",
              "use cosine, linear, constant, constant_with_warmup, cosine_with_restarts or polynomial");
}

LrLambda cosine_decay_with_warmup_lambda(const CosineDecayWithWarmupSchedulerConfig& c,
                                         int64_t num_training_steps) {
  if (c.num_decay_steps < 1)
    throw_usage("cosine_decay_with_warmup needs num_decay_steps (a required field in LeRobot)",
                "--scheduler.num_decay_steps", "pass --scheduler.num_decay_steps=N (steps of the cosine decay)");
  int64_t warmup = c.num_warmup_steps;
  int64_t decay = c.num_decay_steps;
  if (num_training_steps < c.num_decay_steps) {
    const double scale = static_cast<double>(num_training_steps) / static_cast<double>(c.num_decay_steps);
    warmup = static_cast<int64_t>(static_cast<double>(c.num_warmup_steps) * scale);
    decay = num_training_steps;
    LOG_INFO << "scheduler: --steps (" << num_training_steps << ") < num_decay_steps ("
             << c.num_decay_steps << "): warm-up scaled to " << warmup << ", decay to " << decay;
  }
  if (c.peak_lr == 0.0)
    throw_usage("peak_lr must be non-zero", "--scheduler.peak_lr", "set --scheduler.peak_lr");
  const double alpha = c.decay_lr / c.peak_lr;
  return [warmup, decay, alpha](int64_t s) {
    if (s < warmup) {
      if (s <= 0) return 1.0 / static_cast<double>(warmup + 1);
      const double frac = 1.0 - static_cast<double>(s) / static_cast<double>(warmup);
      return (1.0 / static_cast<double>(warmup + 1) - 1.0) * frac + 1.0;
    }
    const int64_t step = std::min(s, decay);
    const double cosine = 0.5 * (1.0 + std::cos(kPi * static_cast<double>(step) / static_cast<double>(decay)));
    return (1.0 - alpha) * cosine + alpha;
  };
}

LrLambda vqbet_lambda(int64_t vqvae, int64_t w, double cycles, int64_t t) {
  return [vqvae, w, cycles, t](int64_t s) {
    if (s < vqvae) return 1.0;
    const int64_t adjusted = s - vqvae;
    if (adjusted < w) return warmup_factor(adjusted, w);
    // LeRobot divides by --steps - warm-up (the VQ-VAE phase is not subtracted).
    const double progress =
        static_cast<double>(adjusted - w) / static_cast<double>(std::max<int64_t>(1, t - w));
    return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * cycles * 2.0 * progress)));
  };
}

LrLambda constant_with_warmup_lambda(int64_t w) {
  return [w](int64_t s) { return s < w ? warmup_factor(s, w) : 1.0; };
}

LrLambda cosine_annealing_with_warmup_lambda(int64_t w, int64_t t) {
  return [w, t](int64_t s) {
    if (s < w) return warmup_factor(s, w);
    const double progress = static_cast<double>(s - w) / static_cast<double>(std::max<int64_t>(1, t - w));
    return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * progress)));
  };
}

Scheduler::Scheduler(torch::optim::Optimizer& optimizer, LrLambda lambda)
    : optimizer_(optimizer), lambda_(std::move(lambda)) {
  for (size_t g = 0; g < optimizer_.param_groups().size(); ++g)
    base_lrs_.push_back(group_lr(optimizer_, g));
  step();  // torch's _initial_step
}

void Scheduler::step() {
  ++step_count_;
  ++last_epoch_;
  const double factor = lambda_(last_epoch_);
  last_lr_.clear();
  for (size_t g = 0; g < base_lrs_.size(); ++g) {
    const double lr = base_lrs_[g] * factor;
    set_group_lr(optimizer_, g, lr);
    last_lr_.push_back(lr);
  }
}

Json Scheduler::state_dict(TorchStateFormat format) const {
  Json j = Json::object();
  Json base = Json::array(), last = Json::array(), lambdas = Json::array();
  for (double v : base_lrs_) base.push_back(v);
  for (double v : last_lr_) last.push_back(v);
  for (size_t i = 0; i < base_lrs_.size(); ++i) lambdas.push_back(nullptr);
  j["base_lrs"] = base;
  j["last_epoch"] = last_epoch_;
  if (format == TorchStateFormat::kTorch2_2) j["verbose"] = false;
  j["_step_count"] = step_count_;
  if (format == TorchStateFormat::kTorch2_9) j["_is_initial"] = false;  // set before the initial step()
  j["_get_lr_called_within_step"] = false;
  j["_last_lr"] = last;
  j["lr_lambdas"] = lambdas;
  return j;
}

void Scheduler::load_state_dict(const Json& s, const std::string& where) {
  auto need = [&](const char* key) -> const Json& {
    if (!s.is_object() || !s.contains(key))
      throw_checkpoint(std::string("missing key '") + key + "'", where,
                       "the file is not a LambdaLR state dict; resume from a complete checkpoint");
    return s.at(key);
  };
  auto doubles = [&](const char* key) {
    const Json& a = need(key);
    std::vector<double> out;
    if (!a.is_array()) throw_checkpoint(std::string("'") + key + "' is not a list", where);
    for (const auto& v : a) {
      if (!v.is_number()) throw_checkpoint(std::string("'") + key + "' holds a non-number", where);
      out.push_back(v.get<double>());
    }
    return out;
  };
  auto base = doubles("base_lrs");
  auto last = doubles("_last_lr");
  if (base.size() != base_lrs_.size() || last.size() != base_lrs_.size())
    throw_checkpoint("scheduler state has " + std::to_string(base.size()) +
                         " param groups, the optimizer has " + std::to_string(base_lrs_.size()),
                     where, "resume with the same policy and optimizer settings");
  const Json& le = need("last_epoch");
  const Json& sc = need("_step_count");
  if (!le.is_number_integer() || !sc.is_number_integer())
    throw_checkpoint("last_epoch/_step_count must be integers", where);
  base_lrs_ = std::move(base);
  last_lr_ = std::move(last);
  last_epoch_ = le.get<int64_t>();
  step_count_ = sc.get<int64_t>();
}

void Scheduler::save(const fs::path& path, TorchStateFormat format) const {
  write_file_atomic(path, dump_pretty(state_dict(format), 4));
}

void Scheduler::load(const fs::path& path) {
  Json j;
  try {
    j = Json::parse(read_file(path));
  } catch (const Json::exception& e) {
    throw_checkpoint(std::string("invalid JSON: ") + e.what(), path.string());
  }
  load_state_dict(j, path.string());
}

std::unique_ptr<Scheduler> make_scheduler(const SchedulerConfig* config,
                                          torch::optim::Optimizer& optimizer,
                                          int64_t num_training_steps) {
  if (!config) return nullptr;
  if (auto* d = dynamic_cast<const DiffuserSchedulerConfig*>(config))
    return std::make_unique<Scheduler>(
        optimizer, diffusers_lambda(d->name, d->num_warmup_steps, num_training_steps, group_lr(optimizer, 0)));
  if (auto* c = dynamic_cast<const CosineDecayWithWarmupSchedulerConfig*>(config))
    return std::make_unique<Scheduler>(optimizer,
                                       cosine_decay_with_warmup_lambda(*c, num_training_steps));
  if (auto* v = dynamic_cast<const VQBeTSchedulerConfig*>(config)) {
    if (!v->num_vqvae_training_steps)
      throw_usage("the vqbet scheduler needs num_vqvae_training_steps", "--scheduler.num_vqvae_training_steps",
                  "pass --scheduler.num_vqvae_training_steps=N (steps at the base lr before the warm-up)");
    return std::make_unique<Scheduler>(optimizer, vqbet_lambda(*v->num_vqvae_training_steps, v->num_warmup_steps,
                                                               v->num_cycles, num_training_steps));
  }
  if (auto* c = dynamic_cast<const ConstantWithWarmupSchedulerConfig*>(config))
    return std::make_unique<Scheduler>(optimizer, constant_with_warmup_lambda(c->num_warmup_steps));
  if (auto* c = dynamic_cast<const CosineAnnealingWithWarmupSchedulerConfig*>(config))
    return std::make_unique<Scheduler>(optimizer,
                                       cosine_annealing_with_warmup_lambda(c->num_warmup_steps, num_training_steps));
  throw_usage("scheduler type '" + config->type() + "' is not supported", "--scheduler.type",
              "use diffuser, cosine_decay_with_warmup, cosine_annealing_with_warmup, constant_with_warmup or vqbet");
}

int64_t scheduler_horizon_steps(const SchedulerConfig& config) {
  if (auto* c = dynamic_cast<const CosineDecayWithWarmupSchedulerConfig*>(&config))
    return std::max(c->num_warmup_steps, c->num_decay_steps);
  if (auto* v = dynamic_cast<const VQBeTSchedulerConfig*>(&config))
    return v->num_vqvae_training_steps.value_or(0) + v->num_warmup_steps;
  return config.num_warmup_steps;
}

}  // namespace lerobot


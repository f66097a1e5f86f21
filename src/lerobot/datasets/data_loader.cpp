// DataLoader: deterministic multi-threaded batch assembly with backpressure and error transfer.
#include "lerobot/datasets/data_loader.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/timer.h"

namespace lerobot {

DataBatch collate(const std::vector<DatasetItem>& items) {
  DataBatch b;
  if (items.empty()) return b;
  for (const auto& [key, _] : items[0].tensors) {
    std::vector<torch::Tensor> parts;
    parts.reserve(items.size());
    for (const auto& it : items) {
      auto f = it.tensors.find(key);
      if (f == it.tensors.end()) throw_data("batch items disagree on key '" + key + "'");
      parts.push_back(f->second);
    }
    b.tensors[key] = torch::stack(parts, 0);
  }
  for (const auto& it : items) b.tasks.push_back(it.task);
  return b;
}

void augment_item(DatasetItem& item, const std::vector<AugmentedCamera>& cameras, const ImageTransforms& transforms,
                  uint64_t seed, int64_t rank, int64_t step, int64_t position) {
  for (size_t c = 0; c < cameras.size(); ++c) {
    auto it = item.tensors.find(cameras[c].key);
    if (it == item.tensors.end()) continue;
    torch::Tensor x = it->second;
    const bool as_uint8 = cameras[c].video && x.scalar_type() == torch::kUInt8;
    // Decoded frames may be views of an (H, W, C) buffer: one contiguous copy here, so each kernel
    // below runs on planes instead of copying strided pixels again.
    if (!as_uint8 && x.scalar_type() == torch::kUInt8)
      x = x.to(torch::kFloat32, false, false, torch::MemoryFormat::Contiguous).div_(255.0);
    else x = x.contiguous();
    TransformRng rng(mix_seed({seed, uint64_t(rank), uint64_t(step), uint64_t(position), uint64_t(c)}));
    x = transforms(x, rng);
    it->second = as_uint8 ? x.to(torch::kFloat32).div_(255.0) : x;  // LeRobot's batch[cam].float() / 255
  }
}

std::vector<AugmentedCamera> augmented_cameras(const LeRobotDataset& dataset) {
  const auto videos = dataset.video_keys();
  std::vector<AugmentedCamera> out;
  for (const auto& key : dataset.camera_keys())
    out.push_back({key, std::find(videos.begin(), videos.end(), key) != videos.end()});
  return out;
}

DataLoader::DataLoader(std::shared_ptr<const LeRobotDataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(options) {
  EpisodeAwareSampler sampler(dataset_->episode_ranges(), options_.drop_n_first_frames,
                              options_.drop_n_last_frames, options_.shuffle, options_.seed);
  num_samples_ = sampler.size();
  plan_ = std::make_unique<BatchPlan>(std::move(sampler), options_.batch_size, options_.world_size,
                                      options_.rank, options_.start_step, options_.start_batch_size,
                                      options_.start_world_size);
  batches_per_epoch_ = plan_->batches_per_epoch();
  cameras_ = augmented_cameras(*dataset_);
  pin_ = options_.pin_memory < 0 ? torch::cuda::is_available() : options_.pin_memory != 0;
  if (options_.num_workers < 0) throw_usage("num_workers must be >= 0", "--num_workers");
  activity_ = std::make_unique<Activity[]>(size_t(std::max(options_.num_workers, 0)));
  for (int i = 0; i < options_.num_workers; ++i) workers_.emplace_back([this, i] { worker_loop(activity_[i]); });
}

DataLoader::~DataLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  consumed_.notify_all();
  produced_.notify_all();
  for (auto& t : workers_) t.join();
}

DataBatch DataLoader::load(int64_t k, const std::vector<int64_t>& indices, Activity* activity) const {
  std::vector<DatasetItem> items;
  items.reserve(indices.size());
  for (int64_t i : indices) {
    if (activity) {
      activity->since_ns = steady_now_ns();
      activity->frame = i;
    }
    items.push_back(dataset_->get_item(i));
  }
  if (activity) activity->frame = -1;
  const int64_t step = options_.start_step + k;
  if (options_.image_transforms && options_.image_transforms->active()) {
    for (size_t j = 0; j < items.size(); ++j)
      augment_item(items[j], cameras_, *options_.image_transforms, options_.seed, options_.rank, step, int64_t(j));
  }
  DataBatch b = collate(items);
  b.indices = indices;
  b.step = step;
  if (pin_)
    for (auto& [_, t] : b.tensors) t = t.pin_memory();
  return b;
}

void DataLoader::worker_loop(Activity& activity) {
  const int64_t capacity = std::max<int64_t>(1, int64_t(options_.prefetch_factor) * options_.num_workers);
  while (true) {
    int64_t k;
    std::vector<int64_t> indices;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      consumed_.wait(lock, [&] { return stop_ || next_claim_ < next_consume_ + capacity; });
      if (stop_) return;
      k = next_claim_++;
      indices = plan_->next();  // claimed in order under the lock: batch k is always the same
      slots_[k];
    }
    Slot done;
    try {
      done.batch = load(k, indices, &activity);
    } catch (...) {
      done.error = std::current_exception();
      activity.frame = -1;
    }
    done.ready = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slots_[k] = std::move(done);
    }
    produced_.notify_all();
  }
}

DataBatch DataLoader::next() {
  if (workers_.empty()) {
    const int64_t k = next_consume_++;
    return load(k, plan_->next());
  }
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t k = next_consume_;
  auto ready = [&] {
    auto it = slots_.find(k);
    return it != slots_.end() && it->second.ready;
  };
  if (options_.stall_report_s > 0) {
    const auto every = std::chrono::duration<double>(options_.stall_report_s);
    const Stopwatch waited;
    while (!produced_.wait_for(lock, every, ready)) LOG_WARNING << stall_report(k, waited.seconds());
  } else {
    produced_.wait(lock, ready);
  }
  Slot slot = std::move(slots_[k]);
  slots_.erase(k);
  ++next_consume_;
  lock.unlock();
  consumed_.notify_all();
  if (slot.error) std::rethrow_exception(slot.error);
  return std::move(slot.batch);
}

std::string DataLoader::stall_report(int64_t k, double waited_s) const {
  std::ostringstream m;
  m.setf(std::ios::fixed);
  m.precision(1);
  m << "data loader: the batch for step " << options_.start_step + k << " is not ready after " << waited_s
    << " s (still waiting; reported every " << options_.stall_report_s << " s).";
  const int64_t now = steady_now_ns();
  for (int i = 0; i < options_.num_workers; ++i) {
    const int64_t frame = activity_[i].frame.load();
    m << " Worker " << i << ": ";
    if (frame < 0) m << "between frames.";
    else m << "on " << dataset_->describe_frame(frame) << " for " << double(now - activity_[i].since_ns.load()) * 1e-9 << " s.";
  }
  m << " A file on a stalled disk or network file system, or a stuck video decode, holds a worker there.";
  return m.str();
}

}  // namespace lerobot

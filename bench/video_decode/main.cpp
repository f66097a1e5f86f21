// Benchmark: decode an AV1 640x480 mp4 to RGB with lerobot_video vs `ffmpeg -f rawvideo rgb24`.
// Usage: bench_video_decode [video.mp4] [repeats]. Without a file it encodes a synthetic 300-frame
// 30 fps AV1 video with our encoder (LeRobot defaults). Prints frames/s and ratios ours/ffmpeg
// (best of `repeats` runs each; wall-clock and CPU-time ratios).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lerobot/io/video/video_decoder.h"
#include "lerobot/io/video/video_encoder.h"
#include "lerobot/io/video/video_probe.h"

using namespace lerobot;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

void make_video(const std::string& path, int n) {
  const int w = 640, h = 480;
  VideoEncoder enc(path, w, h, 30);
  std::vector<uint8_t> f(size_t(w) * h * 3);
  uint32_t seed = 1;
  for (int k = 0; k < n; ++k) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        seed = seed * 1664525u + 1013904223u;
        int noise = int(seed >> 28);  // sensor-like noise, 0..15
        double cx = 320 + 200 * std::sin(k * 0.05), cy = 240 + 150 * std::cos(k * 0.07);
        bool box = std::abs(x - cx) < 60 && std::abs(y - cy) < 40;
        uint8_t* p = &f[(size_t(y) * w + x) * 3];
        p[0] = uint8_t(box ? 220 : (x / 3 + k) % 200 + noise);
        p[1] = uint8_t(box ? 40 : (y / 2 + 2 * k) % 200 + noise);
        p[2] = uint8_t(((x + y) / 5) % 180 + noise);
      }
    }
    enc.add_frame(f.data(), PixelLayout::kHWC);
  }
  enc.finish();
}

struct Timing {
  double wall = 0, cpu = 0;
  long frames = 0;
};

Timing run_ours(const std::string& path, int threads, PixelLayout layout) {
  VideoDecoder d(path, DecoderOptions{threads});
  std::vector<uint8_t> buf(d.frame_bytes());
  Timing t;
  double w0 = now_s(), c0 = cpu_s();
  while (d.next_into(buf.data(), layout)) ++t.frames;
  t.wall = now_s() - w0;
  t.cpu = cpu_s() - c0;
  return t;
}

// Runs the ffmpeg CLI with -benchmark and parses "bench: utime=..s stime=..s rtime=..s".
Timing run_ffmpeg(const std::string& path, int threads) {
  std::string cmd = "ffmpeg -hide_banner -nostats -benchmark -threads " + std::to_string(threads) +
                    " -i '" + path + "' -f rawvideo -pix_fmt rgb24 -y /dev/null 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  Timing t;
  if (!p) return t;
  char line[4096];
  double utime = 0, stime = 0, rtime = 0;
  while (fgets(line, sizeof(line), p)) {
    const char* b = strstr(line, "bench: utime=");
    if (b) sscanf(b, "bench: utime=%lfs stime=%lfs rtime=%lfs", &utime, &stime, &rtime);
    const char* fr = strstr(line, "frame=");
    if (fr) t.frames = atol(fr + 6);
  }
  pclose(p);
  t.wall = rtime;
  t.cpu = utime + stime;
  return t;
}

template <class F>
Timing best_of(int repeats, F f) {
  Timing best;
  best.wall = 1e30;
  for (int i = 0; i < repeats; ++i) {
    Timing t = f();
    if (t.wall < best.wall) best = t;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "/tmp/lerobot_bench_av1_640x480_30fps.mp4";
  int repeats = argc > 2 ? std::max(1, atoi(argv[2])) : 3;
  if (argc <= 1) {
    double t0 = now_s();
    make_video(path, 300);
    std::printf("encoded %s (300 frames, libsvtav1 crf30 g2 preset12) in %.2f s\n", path.c_str(),
                now_s() - t0);
  }
  VideoInfo info = probe_video(path);
  VideoDecoder probe(path);
  std::printf("video: %s %dx%d %s %.3g fps, %lld frames; our decoder: %s; cores: %u\n",
              info.codec.c_str(), info.width, info.height, info.pix_fmt.c_str(), info.fps,
              (long long)info.num_frames, probe.decoder_name().c_str(),
              std::thread::hardware_concurrency());
  std::printf("%-28s %8s %10s %10s %9s\n", "run", "frames", "wall_s", "cpu_s", "fps");
  auto report = [](const char* name, const Timing& t) {
    std::printf("%-28s %8ld %10.3f %10.3f %9.1f\n", name, t.frames, t.wall, t.cpu,
                t.wall > 0 ? t.frames / t.wall : 0.0);
  };
  for (int threads : {1, 0}) {
    const char* label = threads == 1 ? "1 thread" : "all threads";
    Timing ff = best_of(repeats, [&] { return run_ffmpeg(path, threads); });
    Timing hwc = best_of(repeats, [&] { return run_ours(path, threads, PixelLayout::kHWC); });
    Timing chw = best_of(repeats, [&] { return run_ours(path, threads, PixelLayout::kCHW); });
    std::printf("-- %s --\n", label);
    report("ffmpeg CLI rgb24 (rtime)", ff);
    report("ours HWC", hwc);
    report("ours CHW", chw);
    if (ff.wall > 0 && ff.frames > 0) {
      double ff_fps = ff.frames / ff.wall;
      std::printf("ratio ours/ffmpeg (%s), wall fps: HWC %.2fx, CHW %.2fx\n", label,
                  hwc.frames / hwc.wall / ff_fps, chw.frames / chw.wall / ff_fps);
      // CPU seconds per frame is steadier than wall time on a loaded machine.
      double ff_cpf = ff.cpu / ff.frames;
      std::printf("ratio ours/ffmpeg (%s), frames per CPU-second: HWC %.2fx, CHW %.2fx\n", label,
                  ff_cpf / (hwc.cpu / hwc.frames), ff_cpf / (chw.cpu / chw.frames));
    } else {
      std::printf("ffmpeg CLI did not run; no ratio\n");
    }
  }
  return 0;
}

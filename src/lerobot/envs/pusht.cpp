// pusht: the physics of gym_pusht's PushTEnv on Chipmunk2D (the engine pymunk wraps), built with
// the same calls in the same order (so shape ids, contact order and every float are pymunk's), the
// reset draws and the coverage reward. The camera is in pusht_draw.cpp.
#include "lerobot/envs/pusht.h"

#include <chipmunk/chipmunk.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "lerobot/common/error.h"
#include "lerobot/envs/convex_overlap.h"
#include "lerobot/envs/exact_float.h"
#include "lerobot/envs/cv_draw.h"
#include "lerobot/envs/cv_resize.h"
#include "lerobot/envs/numpy_random.h"
#include "lerobot/envs/pusht_draw.h"

namespace lerobot {

namespace {
constexpr double kPi = 3.141592653589793;  // np.pi
const std::array<double, 3> kGoalPose = {256.0, 256.0, kPi / 4};

// The goal T's pose as gym_pusht's get_goal_pose_body builds it (a body with its centre of gravity
// at its origin), used for its local-to-world transform only.
struct GoalBody {
  cpBody* body;
  GoalBody() : body(cpBodyNew(1.0, cpMomentForBox(1.0, 50.0, 100.0))) {
    cpBodySetPosition(body, cpv(kGoalPose[0], kGoalPose[1]));
    cpBodySetAngle(body, kGoalPose[2]);
  }
  ~GoalBody() { cpBodyFree(body); }
  GoalBody(const GoalBody&) = delete;
  GoalBody& operator=(const GoalBody&) = delete;
};

// Debian's libchipmunk is a debug build: its first cpSpaceNew prints a two-line banner to stdout.
// The first space is made once here with stdout pointed at /dev/null, before any env exists.
void create_first_space_quietly() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::fflush(stdout);
    const int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved >= 0 && null >= 0) dup2(null, STDOUT_FILENO);
    cpSpaceFree(cpSpaceNew());
    std::fflush(stdout);
    if (saved >= 0 && null >= 0) dup2(saved, STDOUT_FILENO);
    if (null >= 0) close(null);
    if (saved >= 0) close(saved);
  });
}

std::vector<Point2d> world_polygon(const cpBody* body, const cpShape* shape) {
  std::vector<Point2d> out;
  for (int i = 0, n = cpPolyShapeGetCount(shape); i < n; ++i) {
    const cpVect w = cpBodyLocalToWorld(body, cpPolyShapeGetVert(shape, i));
    out.push_back({w.x, w.y});
  }
  return out;
}
}  // namespace

PushTEnv::PushTEnv(EnvSpec spec, PushTObservation observation) : spec_(std::move(spec)) {
  if (observation == PushTObservation::kKeypoints) {
    spec_.image_observed = false;
    spec_.env_state_dim = 16;
  }
  if (spec_.fps != 10)
    throw_usage("PushT steps its physics 10 times per action at 100 Hz, so it runs at 10 fps, not " +
                    std::to_string(spec_.fps),
                "--env.fps", "leave --env.fps at 10");
  spec_.action_low = 0.0f;
  spec_.action_high = static_cast<float>(kWorld);
  create_first_space_quietly();
  reset(0);
}

PushTEnv::~PushTEnv() { teardown(); }

void PushTEnv::teardown() {
  if (!space_) return;
  cpSpaceFree(space_);
  for (cpShape* s : shapes_) cpShapeFree(s);
  cpBodyFree(agent_);
  cpBodyFree(block_);
  shapes_.clear();
  space_ = nullptr;
  agent_ = block_ = nullptr;
}

// gym_pusht's _setup: walls, agent and T added exactly as pymunk adds them (Space.add adds the
// bodies first, then the shapes, in argument order).
void PushTEnv::setup() {
  teardown();
  space_ = cpSpaceNew();
  cpSpaceSetGravity(space_, cpv(0.0, 0.0));
  cpSpaceSetDamping(space_, 0.0);  // pymunk's damping 0: a body keeps no velocity between steps
  cpBody* ground = cpSpaceGetStaticBody(space_);
  const cpVect walls[4][2] = {{{5, 506}, {5, 5}}, {{5, 5}, {506, 5}}, {{506, 5}, {506, 506}}, {{5, 506}, {506, 506}}};
  for (const auto& w : walls) {
    cpShape* s = cpSegmentShapeNew(ground, w[0], w[1], 2.0);
    cpShapeSetUserData(s, reinterpret_cast<cpDataPointer>(static_cast<intptr_t>(PushTPart::kWall)));
    shapes_.push_back(s);
  }
  for (size_t i = 0; i < 4; ++i) cpSpaceAddShape(space_, shapes_[i]);

  agent_ = cpBodyNewKinematic();
  cpBodySetPosition(agent_, cpv(256.0, 400.0));
  cpShape* disc = cpCircleShapeNew(agent_, 15.0, cpvzero);
  cpShapeSetUserData(disc, reinterpret_cast<cpDataPointer>(static_cast<intptr_t>(PushTPart::kAgent)));
  shapes_.push_back(disc);
  cpSpaceAddBody(space_, agent_);
  cpSpaceAddShape(space_, disc);

  // add_tee(scale=30, length=4): a 120x30 bar and a 30x90 stem. Its moment of inertia counts the
  // bar twice, as gym_pusht computes it.
  const double scale = 30.0, length = 4.0;
  const cpVect bar[4] = {{-length * scale / 2, scale}, {length * scale / 2, scale}, {length * scale / 2, 0}, {-length * scale / 2, 0}};
  const cpVect stem[4] = {{-scale / 2, scale}, {-scale / 2, length * scale}, {scale / 2, length * scale}, {scale / 2, scale}};
  const double inertia = cpMomentForPoly(1.0, 4, bar, cpvzero, 0.0) + cpMomentForPoly(1.0, 4, bar, cpvzero, 0.0);
  block_ = cpBodyNew(1.0, inertia);
  tee_[0] = cpPolyShapeNew(block_, 4, bar, cpTransformIdentity, 0.0);
  tee_[1] = cpPolyShapeNew(block_, 4, stem, cpTransformIdentity, 0.0);
  for (cpShape* s : tee_) {
    cpShapeSetUserData(s, reinterpret_cast<cpDataPointer>(static_cast<intptr_t>(PushTPart::kBlock)));
    shapes_.push_back(s);
  }
  const cpVect c0 = cpShapeGetCenterOfGravity(tee_[0]), c1 = cpShapeGetCenterOfGravity(tee_[1]);
  cpBodySetCenterOfGravity(block_, cpv((c0.x + c1.x) / 2, (c0.y + c1.y) / 2));
  cpBodySetAngle(block_, 0.0);
  cpBodySetPosition(block_, cpv(256.0, 300.0));
  cpSpaceAddBody(space_, block_);
  cpSpaceAddShape(space_, tee_[0]);
  cpSpaceAddShape(space_, tee_[1]);
  // The goal T's boxes in the world (the same each episode) and its area, for reward and camera.
  GoalBody goal;
  goal_tee_.clear();
  goal_area_ = 0.0;
  for (const cpShape* box : tee_) {
    goal_tee_.push_back(world_polygon(goal.body, box));
    goal_area_ += polygon_area(goal_tee_.back());
  }
}

void PushTEnv::reset_to_state(const std::array<double, 5>& state) {
  begin_episode();
  setup();
  // gym_pusht's _set_state: the block's position is set before its angle (legacy order: the angle
  // then turns the T about its centre of gravity), then one physics step.
  cpBodySetPosition(agent_, cpv(state[0], state[1]));
  cpBodySetPosition(block_, cpv(state[2], state[3]));
  cpBodySetAngle(block_, state[4]);
  cpSpaceStep(space_, kDt);
}

void PushTEnv::reset(uint64_t seed) {
  if (seed > 0xFFFFFFFFull)
    throw_usage("PushT seeds numpy's RandomState, which takes seeds below 2^32; got " + std::to_string(seed),
                "--seed", "use a seed below 4294967296");
  NumpyRandomState rs(static_cast<uint32_t>(seed));
  std::array<double, 5> state{};
  state[0] = static_cast<double>(rs.randint(50, 450));
  state[1] = static_cast<double>(rs.randint(50, 450));
  state[2] = static_cast<double>(rs.randint(100, 400));
  state[3] = static_cast<double>(rs.randint(100, 400));
  state[4] = rs.randn() * 2 * kPi - kPi;
  reset_to_state(state);
}

StepInfo PushTEnv::step(const float* action) {
  if (done()) return finished_step();
  // Chipmunk (a debug build in Debian) aborts the process on a non-finite velocity.
  if (!std::isfinite(action[0]) || !std::isfinite(action[1]))
    throw_runtime("the policy returned a non-finite PushT action (" + std::to_string(action[0]) + ", " +
                      std::to_string(action[1]) + ") at step " + std::to_string(steps_),
                  "--env.type=pusht", "check the policy's output (a NaN loss during training leaves NaN weights)");
  has_last_action_ = true;
  last_action_ = {action[0], action[1]};
  // The PD controller in double precision, term by term as numpy evaluates
  // k_p * (action - position) + k_v * (0 - velocity), then velocity += acceleration * dt.
  const double ax = static_cast<double>(action[0]), ay = static_cast<double>(action[1]);
  const int substeps = static_cast<int>(1.0 / (kDt * static_cast<double>(spec_.fps)));
  for (int i = 0; i < substeps; ++i) {
    const cpVect p = cpBodyGetPosition(agent_), v = cpBodyGetVelocity(agent_);
    const double acc_x = kKp * (ax - p.x) + kKv * (0.0 - v.x);
    const double acc_y = kKp * (ay - p.y) + kKv * (0.0 - v.y);
    cpBodySetVelocity(agent_, cpv(v.x + acc_x * kDt, v.y + acc_y * kDt));
    cpSpaceStep(space_, kDt);
  }
  const double cov = coverage();
  const bool success = cov > kSuccessThreshold;
  double reward = cov / kSuccessThreshold;
  reward = reward < 0.0 ? 0.0 : (reward > 1.0 ? 1.0 : reward);
  return finish_step(success, static_cast<float>(reward));
}

double PushTEnv::coverage() const {
  // shapely's MultiPolygon intersection area: the boxes of each T do not overlap, so the overlap
  // of the two Ts is the sum of the overlaps of their boxes, pair by pair.
  const std::vector<Point2d> block[2] = {world_polygon(block_, tee_[0]), world_polygon(block_, tee_[1])};
  double overlap = 0.0;
  for (const auto& g : goal_tee_)
    for (const auto& b : block) overlap += convex_overlap_area(g, b);
  return overlap / goal_area_;
}

void PushTEnv::draw_resized(uint8_t* rgb, int height, int width) const {
  const std::vector<uint8_t> surface = draw_surface();
  cv_resize_linear_u8(surface.data(), kWorld, kWorld, 3, rgb, height, width);
}

void PushTEnv::render(uint8_t* rgb) const {
  const int s = static_cast<int>(spec_.image_size);
  draw_resized(rgb, s, s);
}

void PushTEnv::render_video(uint8_t* rgb) const {
  const int w = static_cast<int>(spec_.video_w()), h = static_cast<int>(spec_.video_h());
  draw_resized(rgb, h, w);
  if (!has_last_action_) return;
  // gym_pusht's _get_img: (action / 512 * [height, width]).astype(int32). The quotient is float32
  // (numpy keeps the action's dtype), the product float64; x is scaled by the height and y by the
  // width, as gym_pusht writes it. Far-off targets are held where the marker is off the image anyway.
  auto to_pixel = [](float a, int extent) {
    const double v = static_cast<double>(a / 512.0f) * static_cast<double>(extent);
    return static_cast<int>(std::max(-1e6, std::min(1e6, v)));
  };
  const int render_size = std::min(w, h);
  const uint8_t red[3] = {255, 0, 0};
  cv_draw_marker_cross({rgb, h, w, 3}, to_pixel(last_action_[0], h), to_pixel(last_action_[1], w), red,
                       static_cast<int>(8.0 / 96.0 * render_size), static_cast<int>(1.0 / 96.0 * render_size));
}

std::vector<uint8_t> PushTEnv::draw_surface() const {
  std::vector<uint8_t> rgb(static_cast<size_t>(kWorld) * kWorld * 3);
  draw_pusht_surface(space_, goal_tee_, rgb.data(), kWorld);
  return rgb;
}

void PushTEnv::get_state(float* state) const {
  const cpVect p = cpBodyGetPosition(agent_);
  state[0] = static_cast<float>(p.x);
  state[1] = static_cast<float>(p.y);
}

std::array<double, 16> PushTEnv::keypoints() const {
  std::array<double, 16> out{};
  const cpVect p = cpBodyGetPosition(block_);
  const double a = cpBodyGetAngle(block_), c = std::cos(a), s = std::sin(a);
  size_t k = 0;
  for (const cpShape* box : tee_)
    for (int i = 0, n = cpPolyShapeGetCount(box); i < n && k + 1 < out.size(); ++i) {
      const cpVect v = cpPolyShapeGetVert(box, i);
      out[k++] = (v.x * c - v.y * s) + p.x;
      out[k++] = (v.x * s + v.y * c) + p.y;
    }
  return out;
}

void PushTEnv::get_env_state(float* env_state) const {
  if (spec_.env_state_dim != 16) return;
  const auto kp = keypoints();
  for (size_t i = 0; i < kp.size(); ++i) env_state[i] = static_cast<float>(kp[i]);
}

std::array<double, 2> PushTEnv::agent_position() const {
  const cpVect p = cpBodyGetPosition(agent_);
  return {p.x, p.y};
}

std::array<double, 2> PushTEnv::agent_velocity() const {
  const cpVect v = cpBodyGetVelocity(agent_);
  return {v.x, v.y};
}

std::array<double, 3> PushTEnv::block_pose() const {
  const cpVect p = cpBodyGetPosition(block_);
  return {p.x, p.y, cpBodyGetAngle(block_)};
}

}  // namespace lerobot

// pusht_draw: gym_pusht's pymunk DrawOptions (its pymunk_override module) on the pygame port: the
// callbacks Chipmunk's cpSpaceDebugDraw calls, with pymunk's colour and rounding rules.
#include "lerobot/envs/pusht_draw.h"

#include <chipmunk/chipmunk.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lerobot/envs/pygame_draw.h"
#include "lerobot/envs/exact_float.h"

namespace lerobot {

namespace {
using pygame_draw::Color;
using pygame_draw::Point;
using pygame_draw::Surface;

// pygame.Color names gym_pusht uses.
constexpr Color kWhite = {255, 255, 255};
constexpr Color kLightGreen = {144, 238, 144};
constexpr Color kLightGray = {211, 211, 211};
constexpr Color kRoyalBlue = {65, 105, 225};
constexpr Color kLightSlateGray = {119, 136, 153};
// pymunk's SpaceDebugDrawOptions defaults.
constexpr cpSpaceDebugColor kOutline = {44, 62, 80, 255};
constexpr cpSpaceDebugColor kConstraint = {142, 68, 173, 255};
constexpr cpSpaceDebugColor kCollisionPoint = {231, 76, 60, 255};

// Python's round() of a float: to the nearest integer, ties to even.
int py_round(double x) { return static_cast<int>(std::nearbyint(x)); }
// pymunk_override.to_pygame with y pointing down: the point's coordinates rounded.
Point to_pygame(cpVect p) { return {py_round(p.x), py_round(p.y)}; }
// SpaceDebugColor.as_int: each channel rounded.
Color as_int(cpSpaceDebugColor c) {
  return {static_cast<uint8_t>(py_round(c.r)), static_cast<uint8_t>(py_round(c.g)), static_cast<uint8_t>(py_round(c.b))};
}
// pymunk_override.light_color: min(1.2 * colour, 255) in float32, as numpy computes it.
cpSpaceDebugColor light_color(cpSpaceDebugColor c) {
  auto up = [](float v) { return std::min(1.2f * v, 255.0f); };
  return {up(c.r), up(c.g), up(c.b), up(c.a)};
}
cpSpaceDebugColor debug_color(Color c) {
  return {static_cast<float>(c[0]), static_cast<float>(c[1]), static_cast<float>(c[2]), 255.0f};
}

Surface& surface_of(cpDataPointer data) { return *static_cast<Surface*>(data); }

void draw_circle(cpVect pos, cpFloat, cpFloat radius, cpSpaceDebugColor, cpSpaceDebugColor fill, cpDataPointer data) {
  const Point p = to_pygame(pos);
  pygame_draw::circle(surface_of(data), as_int(fill), p, py_round(radius));
  pygame_draw::circle(surface_of(data), as_int(light_color(fill)), p, py_round(radius - 4));
}

void draw_segment(cpVect a, cpVect b, cpSpaceDebugColor color, cpDataPointer data) {
  const Point p1 = to_pygame(a), p2 = to_pygame(b);
  pygame_draw::aalines(surface_of(data), as_int(color), {{double(p1.x), double(p1.y)}, {double(p2.x), double(p2.y)}});
}

void draw_fat_segment(cpVect a, cpVect b, cpFloat radius, cpSpaceDebugColor, cpSpaceDebugColor fill, cpDataPointer data) {
  Surface& s = surface_of(data);
  const Point p1 = to_pygame(a), p2 = to_pygame(b);
  const int r = py_round(std::max(1.0, radius * 2));
  const Color c = as_int(fill);
  pygame_draw::lines(s, c, {p1, p2}, r);
  if (r <= 2) return;
  int ox = std::abs(p2.y - p1.y), oy = std::abs(p2.x - p1.x);
  if (ox == 0 && oy == 0) return;
  const double scale = radius / std::pow(static_cast<double>(ox * ox + oy * oy), 0.5);
  ox = py_round(ox * scale);
  oy = py_round(oy * scale);
  pygame_draw::polygon(s, c, {{p1.x - ox, p1.y - oy}, {p1.x + ox, p1.y + oy}, {p2.x + ox, p2.y + oy}, {p2.x - ox, p2.y - oy}});
  pygame_draw::circle(s, c, p1, py_round(radius));
  pygame_draw::circle(s, c, p2, py_round(radius));
}

void draw_polygon(int count, const cpVect* verts, cpFloat, cpSpaceDebugColor, cpSpaceDebugColor fill, cpDataPointer data) {
  std::vector<Point> ps;
  for (int i = 0; i < count; ++i) ps.push_back(to_pygame(verts[i]));
  ps.push_back(ps.front());
  pygame_draw::polygon(surface_of(data), as_int(light_color(fill)), ps);
  const double radius = 2;  // gym_pusht outlines every polygon with radius-2 segments
  for (int i = 0; i < count; ++i) draw_fat_segment(verts[i], verts[(i + 1) % count], radius, fill, fill, data);
}

void draw_dot(cpFloat size, cpVect pos, cpSpaceDebugColor color, cpDataPointer data) {
  pygame_draw::circle(surface_of(data), as_int(color), to_pygame(pos), py_round(size));
}

cpSpaceDebugColor color_for_shape(cpShape* shape, cpDataPointer) {
  switch (static_cast<PushTPart>(reinterpret_cast<intptr_t>(cpShapeGetUserData(shape)))) {
    case PushTPart::kWall: return debug_color(kLightGray);
    case PushTPart::kAgent: return debug_color(kRoyalBlue);
    case PushTPart::kBlock: return debug_color(kLightSlateGray);
  }
  return debug_color(kLightSlateGray);
}
}  // namespace

void draw_pusht_surface(cpSpace* space, const std::vector<std::vector<Point2d>>& goal_tee, uint8_t* rgb, int size) {
  Surface surface(rgb, size, size);
  surface.fill(kWhite);
  for (const auto& box : goal_tee) {
    std::vector<Point> pts;
    for (const auto& v : box) pts.push_back({py_round(v[0]), py_round(v[1])});
    pts.push_back(pts.front());
    pygame_draw::polygon(surface, kLightGreen, pts);
  }
  cpSpaceDebugDrawOptions options{};
  options.drawCircle = draw_circle;
  options.drawSegment = draw_segment;
  options.drawFatSegment = draw_fat_segment;
  options.drawPolygon = draw_polygon;
  options.drawDot = draw_dot;
  options.flags = static_cast<cpSpaceDebugDrawFlags>(CP_SPACE_DEBUG_DRAW_SHAPES | CP_SPACE_DEBUG_DRAW_CONSTRAINTS |
                                                     CP_SPACE_DEBUG_DRAW_COLLISION_POINTS);
  options.shapeOutlineColor = kOutline;
  options.colorForShape = color_for_shape;
  options.constraintColor = kConstraint;
  options.collisionPointColor = kCollisionPoint;
  options.data = &surface;
  cpSpaceDebugDraw(space, &options);
}

}  // namespace lerobot

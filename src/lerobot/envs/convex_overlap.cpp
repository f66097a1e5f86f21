// Sutherland-Hodgman clipping of one convex polygon by another, and shoelace areas.
#include "lerobot/envs/convex_overlap.h"

#include <cmath>

#include "lerobot/envs/exact_float.h"

namespace lerobot {

namespace {
double cross(const Point2d& o, const Point2d& a, const Point2d& b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}
double signed_area(const std::vector<Point2d>& p) {
  double s = 0.0;
  for (size_t i = 0, n = p.size(); i < n; ++i) {
    const Point2d& a = p[i];
    const Point2d& b = p[(i + 1) % n];
    s += a[0] * b[1] - b[0] * a[1];
  }
  return 0.5 * s;
}
}  // namespace

double polygon_area(const std::vector<Point2d>& poly) { return std::fabs(signed_area(poly)); }

std::vector<Point2d> convex_intersection(const std::vector<Point2d>& subject, const std::vector<Point2d>& clip) {
  if (subject.size() < 3 || clip.size() < 3) return {};
  // Inside means on the left of each clip edge for a counter-clockwise clip polygon.
  const double orient = signed_area(clip) >= 0.0 ? 1.0 : -1.0;
  std::vector<Point2d> out = subject;
  for (size_t i = 0, n = clip.size(); i < n && !out.empty(); ++i) {
    const Point2d& a = clip[i];
    const Point2d& b = clip[(i + 1) % n];
    std::vector<Point2d> in;
    in.swap(out);
    for (size_t j = 0, m = in.size(); j < m; ++j) {
      const Point2d& p = in[j];
      const Point2d& q = in[(j + 1) % m];
      const double dp = orient * cross(a, b, p), dq = orient * cross(a, b, q);
      if (dp >= 0.0) out.push_back(p);
      if ((dp >= 0.0) != (dq >= 0.0)) {
        const double t = dp / (dp - dq);
        out.push_back({p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])});
      }
    }
  }
  return out;
}

double convex_overlap_area(const std::vector<Point2d>& a, const std::vector<Point2d>& b) {
  const auto inter = convex_intersection(a, b);
  return inter.size() < 3 ? 0.0 : polygon_area(inter);
}

}  // namespace lerobot

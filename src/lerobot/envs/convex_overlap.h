// Areas of simple polygons and of the overlap of two convex polygons (shapely's Polygon.area and
// intersection().area for the convex case), in double precision.
#pragma once

#include <array>
#include <vector>

namespace lerobot {

using Point2d = std::array<double, 2>;

// Shoelace area of a simple polygon (either winding; the first point is not repeated).
double polygon_area(const std::vector<Point2d>& poly);
// The overlap of two convex polygons (either winding): `subject` clipped by each edge of `clip`.
std::vector<Point2d> convex_intersection(const std::vector<Point2d>& subject, const std::vector<Point2d>& clip);
double convex_overlap_area(const std::vector<Point2d>& a, const std::vector<Point2d>& b);

}  // namespace lerobot

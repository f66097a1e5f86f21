// pusht_draw: gym_pusht's _draw, the 512x512 pygame surface of the PushT scene: the goal T, then
// Chipmunk's debug draw of the space through gym_pusht's pymunk DrawOptions (pygame primitives).
#pragma once

#include <cstdint>
#include <vector>

#include "lerobot/envs/convex_overlap.h"

struct cpSpace;

namespace lerobot {

// What a shape is, kept in its Chipmunk user data: it picks the shape's colour.
enum class PushTPart : int { kWall = 1, kAgent = 2, kBlock = 3 };

// Draws on `rgb` (size x size x 3, HWC): white, the goal T's boxes (world polygons) in LightGreen,
// then every shape of `space` in Chipmunk's order and the contact points of its last step.
void draw_pusht_surface(cpSpace* space, const std::vector<std::vector<Point2d>>& goal_tee, uint8_t* rgb, int size);

}  // namespace lerobot

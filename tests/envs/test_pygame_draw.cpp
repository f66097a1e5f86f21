// The pygame draw port against images drawn by pygame 2.6.1's own C code.
//
// tests/envs/data/pygame_draw_<scene>.bin come from scripts/pusht_reference/pygame_draw_reference.c
// (see its header for how it was run and for the file format: a text list of draw calls, then
// the raw RGB image pygame drew). Each test replays the calls with the port and wants every
// pixel identical.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "lerobot/envs/pygame_draw.h"

namespace pd = lerobot::pygame_draw;

namespace {

struct Scene {
  std::vector<std::string> ops;  // one draw call a line, as in the file header
  int width = 0;
  int height = 0;
  std::vector<uint8_t> expected;  // HWC RGB
};

Scene load_scene(const std::string& name) {
  const std::string path =
      std::string(LEROBOT_SOURCE_DIR) + "/tests/envs/data/pygame_draw_" + name + ".bin";
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing " << path;
  const std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Scene scene;
  const size_t end = data.find("\nend\n");
  if (end == std::string::npos) {
    ADD_FAILURE() << path << ": no 'end' line";
    return scene;
  }
  std::istringstream header(data.substr(0, end + 1));
  std::string line;
  std::getline(header, line);
  EXPECT_EQ(line, "pygame_draw 1") << path;
  while (std::getline(header, line)) {
    std::istringstream in(line);
    std::string op;
    in >> op;
    if (op == "size") {
      in >> scene.width >> scene.height;
    } else {
      scene.ops.push_back(line);
    }
  }
  scene.expected.assign(data.begin() + end + 5, data.end());
  EXPECT_EQ(scene.expected.size(), static_cast<size_t>(scene.width) * scene.height * 3) << path;
  return scene;
}

// Runs one header line on the surface with the port.
void replay(pd::Surface& s, const std::string& line) {
  std::istringstream in(line);
  std::string op;
  int r = 0, g = 0, b = 0;
  in >> op >> r >> g >> b;
  const pd::Color c{static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)};
  auto read_points = [&in](int n) {
    std::vector<pd::Point> pts(n);
    for (auto& p : pts) in >> p.x >> p.y;
    return pts;
  };
  if (op == "fill") {
    s.fill(c);
  } else if (op == "polygon") {
    int n = 0;
    in >> n;
    pd::polygon(s, c, read_points(n));
  } else if (op == "circle") {
    int x = 0, y = 0, radius = 0;
    in >> x >> y >> radius;
    pd::circle(s, c, {x, y}, radius);
  } else if (op == "lines") {
    int width = 0, n = 0;
    in >> width >> n;
    pd::lines(s, c, read_points(n), width);
  } else if (op == "aalines") {
    int n = 0;
    in >> n;
    std::vector<std::array<double, 2>> pts;
    for (const auto& p : read_points(n)) pts.push_back({double(p.x), double(p.y)});
    pd::aalines(s, c, pts);
  } else {
    ADD_FAILURE() << "unknown draw call: " << line;
  }
}

std::vector<uint8_t> draw(const Scene& scene, const std::vector<std::string>& ops) {
  std::vector<uint8_t> img(static_cast<size_t>(scene.width) * scene.height * 3, 0);
  pd::Surface s(img.data(), scene.width, scene.height);
  for (const auto& op : ops) replay(s, op);
  return img;
}

// Pixels that differ between two images of the scene; describes the first in *first.
int count_differences(const Scene& scene, const std::vector<uint8_t>& got, std::string* first) {
  int n = 0;
  for (int y = 0; y < scene.height; ++y) {
    for (int x = 0; x < scene.width; ++x) {
      const size_t i = (static_cast<size_t>(y) * scene.width + x) * 3;
      if (got[i] == scene.expected[i] && got[i + 1] == scene.expected[i + 1] &&
          got[i + 2] == scene.expected[i + 2]) {
        continue;
      }
      if (n++ == 0 && first) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "first at (x=%d, y=%d): port %d,%d,%d, pygame %d,%d,%d", x,
                      y, got[i], got[i + 1], got[i + 2], scene.expected[i],
                      scene.expected[i + 1], scene.expected[i + 2]);
        *first = buf;
      }
    }
  }
  return n;
}

void expect_identical(const std::string& name) {
  const Scene scene = load_scene(name);
  ASSERT_FALSE(scene.expected.empty());
  std::string first;
  const int diff = count_differences(scene, draw(scene, scene.ops), &first);
  EXPECT_EQ(diff, 0) << name << ": " << diff << " of " << scene.width * scene.height
                     << " pixels differ from pygame 2.6.1; " << first;
}

}  // namespace

TEST(PygameDraw, PushtSceneMatchesPygame) { expect_identical("pusht"); }

TEST(PygameDraw, PolygonsAndCirclesMatchPygame) { expect_identical("polygons_circles"); }

TEST(PygameDraw, LinesAndAalinesMatchPygame) { expect_identical("lines_aalines"); }

// The comparison is sharp: moving one end of one antialiased line by a pixel is caught.
TEST(PygameDraw, ComparisonCatchesAOnePixelChange) {
  const Scene scene = load_scene("pusht");
  ASSERT_FALSE(scene.expected.empty());
  std::vector<std::string> ops = scene.ops;
  bool changed = false;
  for (auto& op : ops) {
    if (op.rfind("aalines ", 0) == 0) {
      std::istringstream in(op);
      std::string name;
      int r, g, b, n, x1, y1, x2, y2;
      in >> name >> r >> g >> b >> n >> x1 >> y1 >> x2 >> y2;
      std::ostringstream out;
      out << name << ' ' << r << ' ' << g << ' ' << b << ' ' << n << ' ' << x1 + 1 << ' ' << y1
          << ' ' << x2 << ' ' << y2;
      op = out.str();
      changed = true;
      break;
    }
  }
  ASSERT_TRUE(changed);
  EXPECT_GT(count_differences(scene, draw(scene, ops), nullptr), 0);
}

TEST(PygameDraw, ClipsAtTheEdgesAndSkipsEmptyShapes) {
  std::vector<uint8_t> img(8 * 6 * 3, 0);
  pd::Surface s(img.data(), 8, 6);
  s.fill({255, 255, 255});
  pd::circle(s, {1, 2, 3}, {3, 3}, 0);  // radius 0: nothing
  pd::lines(s, {1, 2, 3}, {{0, 0}, {7, 5}}, 0);  // width 0: nothing
  for (uint8_t v : img) ASSERT_EQ(v, 255);
  // Far off the surface on every side: nothing drawn, nothing written out of bounds.
  pd::circle(s, {1, 2, 3}, {-100, 3}, 40);
  pd::polygon(s, {1, 2, 3}, {{-50, -50}, {-10, -50}, {-10, -10}});
  pd::lines(s, {1, 2, 3}, {{20, -5}, {40, 30}}, 6);
  pd::aalines(s, {1, 2, 3}, {{{-30.0, 2.0}}, {{-2.0, 4.0}}});
  for (uint8_t v : img) ASSERT_EQ(v, 255);
  // A circle covering the whole surface fills it.
  pd::circle(s, {9, 8, 7}, {4, 3}, 40);
  for (int i = 0; i < 8 * 6; ++i) {
    ASSERT_EQ(s.get(i % 8, i / 8), (pd::Color{9, 8, 7}));
  }
}

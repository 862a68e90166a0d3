// The built-in bitmap font: one 5x9 glyph for each printable ASCII character
// (32..126). Rows 0-6 stand on the baseline (capitals and digits are 7 rows
// tall), rows 7-8 hold descenders. Text is drawn at an integer scale, each
// font pixel becoming a scale x scale square, so titles can be bigger.
#pragma once
#include <cstdint>

namespace mtier::plot::font {

constexpr int kGlyphWidth = 5;   // columns of a glyph
constexpr int kGlyphHeight = 9;  // rows of a glyph, descenders included
constexpr int kAscent = 7;       // rows above the baseline
constexpr int kAdvance = 6;      // columns from one character to the next (1 blank)

// The rows of c's glyph, kGlyphHeight of them, top first; bit 4 of a row is
// its leftmost column. A character outside 32..126 is drawn as '?', so any
// byte string can be drawn.
const uint8_t* glyph(char c);

// Whether column `col`, row `row` of c's glyph is set; false outside the glyph.
bool pixel(char c, int col, int row);

}  // namespace mtier::plot::font

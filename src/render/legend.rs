//! The colour bar drawn into a finished RGBA image: a vertical gradient, its end values and
//! the quantity's name, in a 5 × 7 pixel font scaled to the image.

use super::fields::{colormap_rgb8, Field};

/// Rows of a glyph, five bits each (bit 4 the leftmost pixel).
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '|' => [0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        '/' => [0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10],
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'Y' => [0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        _ => [0; 7],
    }
}

struct Canvas<'a> {
    rgba: &'a mut [u8],
    width: u32,
    height: u32,
}

impl Canvas<'_> {
    fn blend(&mut self, x: i64, y: i64, c: [u8; 3], alpha: f32) {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let k = 4 * (y as usize * self.width as usize + x as usize);
        for (d, &ci) in self.rgba[k..k + 3].iter_mut().zip(&c) {
            *d = (*d as f32 + alpha * (ci as f32 - *d as f32)).round() as u8;
        }
    }

    fn rect(&mut self, x: i64, y: i64, w: i64, h: i64, c: [u8; 3], alpha: f32) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.blend(xx, yy, c, alpha);
            }
        }
    }

    /// Text with its top-left corner at (x, y), `s` pixels per font pixel.
    fn text(&mut self, x: i64, y: i64, s: i64, text: &str, c: [u8; 3]) {
        for (n, ch) in text.chars().enumerate() {
            let g = glyph(ch.to_ascii_uppercase());
            let x0 = x + n as i64 * 6 * s;
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        self.rect(x0 + col * s, y + row as i64 * s, s, s, c, 1.0);
                    }
                }
            }
        }
    }
}

fn text_width(text: &str, s: i64) -> i64 {
    (text.chars().count() as i64 * 6 - 1) * s
}

/// A number in at most four significant figures, without trailing zeros.
fn number(v: f32) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.1E}");
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 4) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Draws the colour bar of `field` at the right edge of an RGBA image.
pub(crate) fn draw(rgba: &mut [u8], width: u32, height: u32, field: &Field) {
    let mut cv = Canvas {
        rgba,
        width,
        height,
    };
    let s = ((height as i64) / 240).max(1);
    let bar_h = (height as i64 * 45 / 100).max(20);
    let bar_w = (6 * s).max(8);
    let margin = 8 * s;
    let (lo, hi) = field.range;
    let labels = [number(hi * field.scale), number(lo * field.scale)];
    let label_w = labels.iter().map(|l| text_width(l, s)).max().unwrap_or(0);
    let title_w = text_width(&field.label, s);
    let panel_w = (bar_w + 4 * s + label_w).max(title_w) + 2 * margin;
    let panel_h = bar_h + 7 * s + 3 * margin;
    let x0 = width as i64 - panel_w - margin;
    let y0 = margin;
    cv.rect(x0, y0, panel_w, panel_h, [255, 255, 255], 0.72);
    let ink = [30, 30, 34];
    cv.text(x0 + margin, y0 + margin, s, &field.label, ink);
    let bx = x0 + margin;
    let by = y0 + 2 * margin + 7 * s;
    for row in 0..bar_h {
        let t = 1.0 - row as f32 / (bar_h - 1).max(1) as f32;
        cv.rect(bx, by + row, bar_w, 1, colormap_rgb8(t), 1.0);
    }
    // a thin frame around the bar
    cv.rect(bx - 1, by - 1, bar_w + 2, 1, ink, 1.0);
    cv.rect(bx - 1, by + bar_h, bar_w + 2, 1, ink, 1.0);
    cv.rect(bx - 1, by - 1, 1, bar_h + 2, ink, 1.0);
    cv.rect(bx + bar_w, by - 1, 1, bar_h + 2, ink, 1.0);
    let tx = bx + bar_w + 4 * s;
    cv.text(tx, by, s, &labels[0], ink);
    cv.text(tx, by + bar_h - 7 * s, s, &labels[1], ink);
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(10.0), "10");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(2e-4), "2.0E-4");
        assert_eq!(number(-0.02), "-0.02");
    }
}

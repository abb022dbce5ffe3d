//! What every plot of the page shares: its width, how many points it
//! draws, its font and its colours.

use std::error::Error;

use plotters::style::RGBColor;

/// Width of every plot, in px.
pub(super) const WIDTH: u32 = 640;
/// At most this many samples go into a histogram (evenly spaced).
pub(super) const MAX_HISTOGRAM_SAMPLES: usize = 20_000;
/// At most this many points per class (regular, mild, severe) in the strip
/// under a histogram.
pub(super) const MAX_STRIP_POINTS: usize = 600;

pub(super) const FONT: &str = "sans-serif";
pub(super) const BAR: RGBColor = RGBColor(76, 120, 168);
pub(super) const MEDIAN: RGBColor = RGBColor(0, 0, 0);
pub(super) const MILD: RGBColor = RGBColor(245, 133, 24);
pub(super) const SEVERE: RGBColor = RGBColor(214, 39, 40);
pub(super) const FIT: RGBColor = RGBColor(214, 39, 40);
pub(super) const FASTER: RGBColor = RGBColor(44, 160, 44);
pub(super) const SAME: RGBColor = RGBColor(110, 110, 110);
pub(super) const UNSURE: RGBColor = RGBColor(255, 127, 14);

/// The colours series (a history's benchmarks, a run's engines) are told
/// apart by, in turn.
pub(super) const SERIES: [RGBColor; 6] = [
    RGBColor(76, 120, 168),
    RGBColor(245, 133, 24),
    RGBColor(84, 162, 75),
    RGBColor(178, 121, 162),
    RGBColor(157, 117, 93),
    RGBColor(114, 183, 178),
];

pub(super) type Plot<T> = Result<T, Box<dyn Error>>;

pub(super) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

//! The output stage: what people and other programs read.
//!
//! - [`table`]: the terminal report (header, rows, verdicts, footer);
//! - [`suite_table`]: the terminal report of a suite's comparison;
//! - [`runtime_table`]: a multi-engine run across its engines, the cells
//!   every format shows and the terminal's table;
//! - [`merged`]: the environments of a merged report's exports, side by
//!   side, and what differs between them;
//! - [`cells`]: a row's cells and notes as every readable output shows them;
//! - [`tables`]: the tables of the Markdown and HTML exports, each declared
//!   once (its columns, its cells), which each format renders;
//! - [`escape`]: text from outside (`Foreign`) made safe for each format,
//!   the one way it is printed;
//! - [`progress`]: the progress line on stderr;
//! - [`units`]: times, rates and counts in units that fit;
//! - [`export`]: JSON, Markdown, CSV, HTML and dashboard files.
//!
//! Everything here is made from [`crate::results`]; nothing measures.

pub mod cells;
pub mod escape;
pub mod export;
#[cfg(test)]
mod foreign_text;
pub mod history;
pub mod merged;
pub mod progress;
pub mod runtime_table;
pub mod suite_table;
pub mod table;
pub mod tables;
pub mod units;

//! RFC 4180 CSV of a run (one record per row) or of a comparison (one record
//! per variant against the reference).
//!
//! The csv crate writes the records ([`Records`]): they end in CRLF, a
//! field holding a comma, a double quote, CR or LF is quoted, its quotes
//! doubled, and every record has as many fields as the header. Names,
//! paths and errors are outside text ([`escape::csv`]): their control
//! characters are escaped, and one that starts with `= + - @`, tab or CR is
//! given a leading `'` so that a spreadsheet reads it as text, not as a
//! formula. Numbers are in ns (or plain ratios) with every digit Rust
//! prints for an `f64` (the shortest text that reads back the same value);
//! an absent or non-finite value is an empty field.

use anyhow::{Context, Result};

use crate::output::escape::csv as text;
use crate::results::{BenchResult, CompareReport, Foreign, Ratio, RunReport, RuntimeView, Verdict};

const RUN_HEADER: [&str; 34] = [
    "name",
    "benchmark",
    "size",
    "engine",
    "path",
    "kind",
    "error",
    "count",
    "samples",
    "median_ns",
    "mean_ns",
    "stddev_ns",
    "min_ns",
    "max_ns",
    "ci95_low_ns",
    "ci95_high_ns",
    "err_pct",
    "ops_per_sec",
    "outliers",
    "fuel_per_op",
    "module_bytes",
    "code_bytes",
    "peak_memory_bytes",
    "peak_rss_bytes",
    "start_instantiate_ns",
    "start_first_call_ns",
    "reference_engine",
    "ratio_to_reference",
    "ratio_ci95_low",
    "ratio_ci95_high",
    "fastest_engine",
    "engine_geomean_ratio",
    "engine_geomean_ci95_low",
    "engine_geomean_ci95_high",
];

/// The columns of the runtime view: the first of them.
const VIEW_COLUMNS: usize = 26;

const COMPARE_HEADER: [&str; 7] = [
    "variant",
    "reference",
    "metric",
    "ratio",
    "ci95_low",
    "ci95_high",
    "verdict",
];

/// The rows of `host run` as CSV, header first; a failed row has its
/// `error` and empty figures.
pub fn csv_run(report: &RunReport) -> Result<String> {
    let mut out = Records::new(RUN_HEADER)?;
    for r in &report.results {
        let mut fields = vec![
            text(&r.name),
            text(&r.benchmark),
            r.size.map(|s| s.to_string()).unwrap_or_default(),
            r.engine.as_ref().map(text).unwrap_or_default(),
            text(&r.path),
            r.kind.map(|k| k.to_string()).unwrap_or_default(),
            r.error.as_ref().map(text).unwrap_or_default(),
        ];
        match &r.figures {
            Some(f) => {
                let ns = &f.ns_per_op;
                fields.extend([
                    f.counts.count.to_string(),
                    f.counts.samples.to_string(),
                    number(ns.median),
                    number(ns.mean),
                    number(ns.stddev),
                    number(ns.min),
                    number(ns.max),
                    number(ns.ci95_low),
                    number(ns.ci95_high),
                    number(f.time.err_pct),
                    f.time.ops_per_sec.map(number).unwrap_or_default(),
                    f.time.outliers.to_string(),
                    f.fuel_per_op.map(number).unwrap_or_default(),
                ]);
                let bytes = |b: Option<u64>| b.map(|b| b.to_string()).unwrap_or_default();
                fields.extend([
                    bytes(f.costs.module_bytes),
                    bytes(f.costs.code_bytes),
                    bytes(f.costs.peak_memory_bytes),
                    bytes(f.costs.peak_rss_bytes),
                ]);
                let start = f.start.as_ref();
                fields.extend([
                    start
                        .map(|s| number(s.instantiate_ns.median))
                        .unwrap_or_default(),
                    start
                        .map(|s| number(s.first_call_ns.median))
                        .unwrap_or_default(),
                ]);
            }
            None => {
                let empty = VIEW_COLUMNS - fields.len();
                fields.extend(std::iter::repeat_n(String::new(), empty));
            }
        }
        fields.extend(view_fields(report.runtimes.as_ref(), r));
        out.push(fields)?;
    }
    out.finish()
}

/// A row's place in the runtime view: the reference, its ratio to it, the
/// benchmark's fastest engine (`a≈b` when not clearly ahead: the
/// runner-up after `≈`) and its engine's geometric mean; empty fields when
/// the view has no such cell.
fn view_fields(view: Option<&RuntimeView>, row: &BenchResult) -> Vec<String> {
    let ratio = |r: Option<&Ratio>| match r {
        Some(r) => [number(r.value), number(r.low), number(r.high)],
        None => Default::default(),
    };
    let Some((view, (benchmark, cell))) = view.and_then(|v| Some((v, v.cell_of(row)?))) else {
        return vec![String::new(); RUN_HEADER.len() - VIEW_COLUMNS];
    };
    let fastest = match (&benchmark.fastest, &benchmark.runner_up) {
        (Some(f), Some(r)) if !benchmark.clear() => text(&Foreign::join([f, r], "≈")),
        (Some(f), _) => text(f),
        _ => String::new(),
    };
    let mean = view.mean_of(&cell.engine).and_then(|m| m.ratio.as_ref());
    std::iter::once(text(&view.reference))
        .chain(ratio(cell.ratio.as_ref()))
        .chain(std::iter::once(fastest))
        .chain(ratio(mean))
        .collect()
}

/// The verdicts of `host compare` as CSV, header first: one record per
/// variant against the reference.
/// Programs: one record per variant and phase, the phase in a last column.
pub fn csv_compare(report: &CompareReport) -> Result<String> {
    let programs = report.comparisons.iter().any(|c| !c.phases.is_empty());
    let header = COMPARE_HEADER.into_iter();
    let mut out = match programs {
        true => Records::new(header.chain(["phase"]))?,
        false => Records::new(header)?,
    };
    for c in &report.comparisons {
        let fields = |ratio: &Ratio, verdict: Verdict| {
            [
                text(&c.variant),
                text(&c.reference),
                text(&c.metric),
                number(ratio.value),
                number(ratio.low),
                number(ratio.high),
                verdict.to_string(),
            ]
        };
        if !programs {
            out.push(fields(&c.ratio, c.verdict))?;
        }
        for p in &c.phases {
            let phase = [p.phase.to_string()];
            out.push(fields(&p.ratio, p.verdict).into_iter().chain(phase))?;
        }
    }
    out.finish()
}

/// CSV records in memory, written by the csv crate: quoted as RFC 4180
/// says, ended by CRLF, each as long as the header (a record of another
/// length is an error, not a shifted column).
pub(super) struct Records(csv::Writer<Vec<u8>>);

impl Records {
    /// The records, `header` first.
    pub(super) fn new<'a>(header: impl IntoIterator<Item = &'a str>) -> Result<Self> {
        let writer = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(Vec::new());
        let mut records = Records(writer);
        records.push(header)?;
        Ok(records)
    }

    /// One record of fields, outside text among them already through
    /// [`text`].
    pub(super) fn push<T: AsRef<[u8]>>(
        &mut self,
        fields: impl IntoIterator<Item = T>,
    ) -> Result<()> {
        self.0.write_record(fields).context("writing a CSV record")
    }

    /// The records as text.
    pub(super) fn finish(self) -> Result<String> {
        let bytes = (self.0.into_inner()).map_err(|e| e.into_error())?;
        String::from_utf8(bytes).context("CSV of text only")
    }
}

/// A number as Rust prints it (round-trips); empty when not finite. A
/// field of its own: a minus sign here is a number's, not a formula's.
pub(super) fn number(x: f64) -> String {
    match x.is_finite() {
        true => x.to_string(),
        false => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures;

    #[test]
    fn a_row_carries_its_start() {
        let mut report = fixtures::run_report();
        if let Some(f) = report.results[0].figures.as_mut() {
            f.start = Some(fixtures::start(8832.5, 50.0, 0.0));
        }
        let csv = csv_run(&report).expect("written");
        let records: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
        let at = (records[0].iter())
            .position(|c| *c == "start_instantiate_ns")
            .expect("a start column");
        assert_eq!(records[1][at..at + 2], ["8832.5", "50"]);
        assert_eq!(records[2][at..at + 2], ["", ""], "a failed row has none");
    }

    #[test]
    fn each_row_carries_its_place_in_the_runtime_view() {
        let csv = csv_run(&fixtures::runtimes_run_report()).expect("written");
        let records: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
        let column = |name: &str| {
            (records[0].iter())
                .position(|c| *c == name)
                .unwrap_or_else(|| panic!("no column {name}"))
        };
        let record = |name: &str| {
            (records.iter())
                .find(|r| r[0] == name)
                .unwrap_or_else(|| panic!("no record {name}"))
        };
        let number = |r: &[&str], c: &str| r[column(c)].parse::<f64>().ok();
        let wasmi = record("xor[wasmi]");
        assert_eq!(wasmi[column("reference_engine")], "cranelift");
        let ratio = number(wasmi, "ratio_to_reference").expect("a ratio");
        assert!((ratio - 12.0).abs() < 0.5, "{ratio}");
        assert!(number(wasmi, "ratio_ci95_low") < Some(ratio));
        assert!(number(wasmi, "engine_geomean_ratio").is_some_and(|g| (g - 6.0).abs() < 0.3));
        assert_eq!(record("sort[v8]")[column("fastest_engine")], "v8");
        assert_eq!(number(record("xor[cranelift]"), "ratio_to_reference"), None);
        let alone = record("component[cranelift]");
        assert!(
            alone[column("reference_engine")..]
                .iter()
                .all(|f| f.is_empty())
        );
    }

    #[test]
    fn run_csv_has_a_header_and_one_record_per_row() {
        let csv = csv_run(&fixtures::run_report()).expect("written");
        let expected = "name,benchmark,size,engine,path,kind,error,count,samples,median_ns,mean_ns,stddev_ns,min_ns,max_ns,ci95_low_ns,ci95_high_ns,err_pct,ops_per_sec,outliers,fuel_per_op,module_bytes,code_bytes,peak_memory_bytes,peak_rss_bytes,start_instantiate_ns,start_first_call_ns,reference_engine,ratio_to_reference,ratio_ci95_low,ratio_ci95_high,fastest_engine,engine_geomean_ratio,engine_geomean_ci95_low,engine_geomean_ci95_high\r\n\
xor.wasm,xor.wasm,,,workloads/xor.wasm,module,,1000,100,1234.5,1240,12,1200,1300,1230,1240,0.52,810044.552,3,,,,,,,,,,,,,,,\r\n\
trap.wasm,trap.wasm,,,workloads/trap.wasm,module,\"wasm trap: unreachable, in `run`\",,,,,,,,,,,,,,,,,,,,,,,,,,,\r\n";
        assert_eq!(csv, expected);
        for line in csv.split_terminator("\r\n") {
            assert_eq!(parse_record(line).len(), 34, "{line}");
        }
    }

    #[test]
    fn numbers_keep_every_digit_and_drop_non_finite_values() {
        assert_eq!(number(f64::NAN), "");
        assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn awkward_names_survive_a_round_trip() {
        let mut report = fixtures::run_report();
        let name = "odd, \"quoted\" name.wasm";
        report.results[0].name = name.into();
        report.results[0].size = Some(64);
        report.results[0].engine = Some("winch".into());
        report.results[0]
            .figures
            .as_mut()
            .expect("measured")
            .fuel_per_op = Some(17.25);
        let csv = csv_run(&report).expect("written");
        let body = csv
            .split_once("\r\n")
            .map(|(_, rest)| rest)
            .expect("a header");
        let first = body.split_once("\r\nt").map(|(r, _)| r).expect("two rows");
        let fields = parse_record(first);
        assert_eq!(fields.len(), RUN_HEADER.len());
        assert_eq!(fields[0], name);
        assert_eq!(fields[2], "64");
        assert_eq!(fields[3], "winch");
        assert_eq!(fields[19], "17.25");
    }

    #[test]
    fn compare_csv_lists_the_verdicts() {
        let csv = csv_compare(&fixtures::compare_report()).expect("written");
        let expected = "variant,reference,metric,ratio,ci95_low,ci95_high,verdict\r\n\
mod16.wasm,mod13.wasm,time,1.2,1.17,1.23,slower\r\n\
mod17.wasm,mod13.wasm,time,0.706,0.69,0.72,faster\r\n\
mod13|copy.wasm,mod13.wasm,time,1.003,0.996,1.008,same\r\n";
        assert_eq!(csv, expected);
    }

    #[test]
    fn compare_csv_of_programs_has_a_record_per_phase() {
        let csv = csv_compare(&fixtures::compare_programs_report()).expect("written");
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("variant,reference,metric,ratio,ci95_low,ci95_high,verdict,phase")
        );
        assert_eq!(
            lines.next(),
            Some("mod16.wasm,mod13.wasm,time,1.002,0.99,1.01,same,instantiate")
        );
        assert_eq!(
            lines.next(),
            Some("mod16.wasm,mod13.wasm,time,1.2,1.17,1.23,slower,execute")
        );
        assert_eq!(csv.lines().count(), 1 + 2 * 3);
    }

    /// The fields of one record, read by the csv crate's reader.
    fn parse_record(line: &str) -> Vec<String> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_bytes());
        let record = reader.records().next().expect("a record").expect("CSV");
        record.iter().map(str::to_string).collect()
    }
}

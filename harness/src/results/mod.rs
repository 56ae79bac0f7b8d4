//! The result files of a run directory `results/<id>/<timestamp>/`: `raw.csv` (one row per
//! repetition, appended point by point: [`store`]; each record read and checked by
//! [`record`]), `summary.csv` (one row per point:
//! [`summary`]) and `meta.json` (settings, machine, build: [`meta`], [`machine`]), the
//! directory itself and its lock ([`run_dir`]), and which recorded points a resumed run
//! measures again ([`resume`]).

mod machine;
mod meta;
mod record;
mod resume;
mod run_dir;
mod store;
mod summary;

pub(crate) use machine::{
    Machine, Measured, build_note, run_differences, this_build, this_machine,
};
pub(crate) use meta::{Meta, Settings, timestamps};
pub(crate) use record::RepCheck;
#[cfg(test)]
pub(crate) use resume::recorded_points;
pub(crate) use resume::{incomplete_measurements, points_to_rerun, recorded_rounds};
pub(crate) use run_dir::{RunLock, create_run_dir, latest_unfinished};
#[cfg(test)]
pub(crate) use store::{RAW_COLUMNS, older_fixture};
pub(crate) use store::{RawRow, Store, cut_last_line, left_out_note};
pub(crate) use summary::{
    PointSummary, Summaries, median_of, spread, summarize, summary_rows, ts_of, write_summary,
};

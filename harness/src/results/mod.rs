//! The result files of a run directory `results/<id>/<timestamp>/`: `raw.csv` (one row per
//! repetition, appended point by point: [`store`]), `summary.csv` (one row per point:
//! [`summary`]) and `meta.json` (settings, machine, build: [`meta`], [`machine`]), the
//! directory itself and its lock ([`run_dir`]), and which recorded points a resumed run
//! measures again ([`resume`]).

mod machine;
mod meta;
mod resume;
mod run_dir;
mod store;
mod summary;

pub(crate) use machine::{this_build, this_machine};
pub(crate) use meta::{Meta, Settings, timestamps};
pub(crate) use resume::{
    incomplete_measurements, points_to_rerun, recorded_points, recorded_rounds,
};
pub(crate) use run_dir::{RunLock, create_run_dir, latest_unfinished};
pub(crate) use store::{
    OLDER_COLUMNS, RAW_HEADER, RawRow, append_rows, cut_last_line, left_out_note, parse_raw,
    parse_stats, read_raw, rewrite_raw, set_aside, upgrade_raw, with_path,
};
pub(crate) use summary::{
    PointSummary, median_of, spread, summarize, summary_rows, ts_of, write_summary,
};

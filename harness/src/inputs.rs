//! The checks of the workloads a command names: the name, the variant on a front-end, and the
//! input files and parameters at a size. `run` checks its point's with them, and the plan of a
//! run its figure's workloads before anything runs.

use crate::failure::Failure;
use crate::spec::WorkloadSpec;
use stealbench_schedulers::FrontEnd;
use stealbench_workloads::{InputOptions, Size, Variant, WorkloadInfo};

/// The workload named `name`, or a one-line reason naming the nearest one.
pub(crate) fn lookup_workload(name: &str) -> Result<WorkloadInfo, Failure> {
    let all = stealbench_workloads::all();
    if let Some(w) = all.iter().find(|w| w.name == name) {
        return Ok(*w);
    }
    let names: Vec<&str> = all.iter().map(|w| w.name).collect();
    Err(Failure::Usage(crate::suggest::unknown(
        "workload", name, &names,
    )))
}

/// Checks that `workload` offers `variant` on `front_end`.
pub(crate) fn check_variant(
    workload: &WorkloadInfo,
    variant: Variant,
    front_end: FrontEnd,
) -> Result<(), Failure> {
    let offered = crate::grid::offered(workload, front_end);
    if offered.contains(&variant) {
        return Ok(());
    }
    let names: Vec<&str> = offered.iter().map(|v| v.name()).collect();
    let nearest = crate::suggest::nearest(variant.name(), names.iter().copied())
        .map(|n| format!("did you mean '{n}'? "))
        .unwrap_or_default();
    Err(Failure::Usage(format!(
        "workload '{}' has no variant '{variant}' on the {front_end} front-end ({nearest}it has: {})",
        workload.name,
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// Checks that every input option set concerns one of the workloads that will run (`specs`,
/// `NAME[/key=value]...`) and that each can use its files and parameter overrides (the
/// spec's, then `options.params`) at `size`. Returns every spec with its parameters at `size`
/// ([`Workload::params_with`]), in the order given.
///
/// [`Workload::params_with`]: stealbench_workloads::Workload::params_with
pub(crate) fn check_inputs(
    specs: &[WorkloadSpec],
    size: Size,
    options: &InputOptions,
) -> Result<Vec<(WorkloadSpec, String)>, Failure> {
    let workloads = specs
        .iter()
        .map(|spec| {
            let info = lookup_workload(spec.name())?;
            let mut overrides = spec.params().to_vec();
            overrides.extend(options.params.iter().cloned());
            Ok((spec, info, overrides))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    for w in options.workloads() {
        if !workloads.iter().any(|(_, i, _)| i.name == w) {
            let running: Vec<&str> = workloads.iter().map(|(_, i, _)| i.name).collect();
            return Err(Failure::Usage(format!(
                "--{w}-video/--{w}-points are inputs of workload '{w}', which is not run here \
                 (workloads: {})",
                if running.is_empty() {
                    "none".to_string()
                } else {
                    running.join(", ")
                }
            )));
        }
    }
    workloads
        .into_iter()
        .map(|(spec, w, overrides)| {
            let options = InputOptions {
                params: overrides,
                ..options.clone()
            };
            (w.describe)(size, &options)
                .map(|p| (spec.clone(), p))
                .map_err(|e| Failure::Usage(format!("{spec} input: {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_checks_name_what_exists() {
        let fib = lookup_workload("fib").unwrap();
        assert!(check_variant(&fib, Variant::Fj, FrontEnd::Closure).is_ok());
        let e = check_variant(&fib, Variant::Gf, FrontEnd::Closure).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message().contains("it has: fj, sf"), "{}", e.message());
        assert!(
            lookup_workload("fibb")
                .unwrap_err()
                .message()
                .contains("'fib'")
        );
    }

    #[test]
    fn an_input_file_of_a_workload_not_run_is_one_plain_line() {
        let options = InputOptions {
            hw_video: Some(std::env::current_exe().unwrap()),
            ..InputOptions::default()
        };
        let e = check_inputs(&["fib".into()], Size::Test, &options).unwrap_err();
        assert_eq!(
            e.message(),
            "--hw-video/--hw-points are inputs of workload 'hw', which is not run here \
             (workloads: fib)"
        );
    }
}

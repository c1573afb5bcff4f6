//! The options of `kestrel run` refused before any work: those a scene kind does not use and
//! those the other options make idle.

use super::super::CliError;
use super::RunArgs;

/// Options of a dynamic run that would do nothing with the others given: refused rather than
/// ignored.
pub(super) fn refuse_idle_options(args: &RunArgs) -> Result<(), CliError> {
    if args.every.is_some() && args.record.is_none() {
        return Err(CliError::input(
            "--every sets the record's frame interval: give --record FILE (without a record it \
             does nothing)",
        ));
    }
    if args.no_constraints {
        let given = [
            ("--tau-structural", args.tau_structural.is_some()),
            ("--tau-shear", args.tau_shear.is_some()),
            ("--passes", args.passes.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, set)| *set) {
            return Err(CliError::input(format!(
                "{flag} has no effect with --no-constraints (it switches the constraints off): \
                 give one or the other"
            )));
        }
    }
    Ok(())
}

/// The options of a dynamic run, refused on a virtual KES test rather than ignored.
pub(super) fn refuse_dynamic_options(args: &RunArgs) -> Result<(), CliError> {
    let given = [
        ("--steps", args.steps.is_some()),
        ("--integrator", args.integrator.is_some()),
        ("--dt", args.dt.is_some()),
        ("--preconditioner", args.preconditioner.is_some()),
        ("--no-constraints", args.no_constraints),
        ("--tau-structural", args.tau_structural.is_some()),
        ("--tau-shear", args.tau_shear.is_some()),
        ("--passes", args.passes.is_some()),
        ("--record", args.record.is_some()),
        ("--every", args.every.is_some()),
    ];
    match given.iter().find(|(_, set)| *set) {
        Some((flag, _)) => Err(CliError::input(format!(
            "{flag} does not apply to a virtual KES test scene: {} runs the quasi-static \
             [kes_test] (its samples are `points`, its output the CSV: --csv FILE)",
            args.scene.display()
        ))),
        None => Ok(()),
    }
}

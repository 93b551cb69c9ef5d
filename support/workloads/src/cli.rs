//! The examples' command line, read with lexopt: usage on request, a usage
//! error for bad options, a failed run reported on stderr.

use std::env::ArgsOs;
use std::iter::Skip;
use std::process::ExitCode;

pub use lexopt::{Arg, Error, Parser, ValueExt};

/// The command line without the program name, as [`main`] hands it on.
pub type Args = Skip<ArgsOs>;

/// Parses the command line with `parse_args` (`Ok(None)` asks for the
/// usage) and runs `run` with the options. Exits 2 for bad options and 1
/// for a run that failed, each with its message on stderr.
pub fn main<O>(
    usage: &str,
    parse_args: impl FnOnce(Args) -> Result<Option<O>, Error>,
    run: impl FnOnce(&O) -> Result<(), String>,
) -> ExitCode {
    let options = match parse_args(std::env::args_os().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{usage}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("error: {error}\n\n{usage}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The value of the option `--name` that `args` has just read, as a
/// positive whole number (`_` may separate digits).
pub fn count(args: &mut Parser, name: &str) -> Result<u64, Error> {
    let text = args.value()?.string()?;
    match text.replace('_', "").parse() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("--{name} takes a positive whole number, not `{text}`").into()),
    }
}

//! The examples' command line: usage on request, a usage error for bad
//! options, a failed run reported on stderr.

use std::process::ExitCode;

/// Parses the command line with `parse_args` (`Ok(None)` asks for the
/// usage) and runs `run` with the options. Exits 2 for bad options and 1
/// for a run that failed, each with its message on stderr.
pub fn main<O>(
    usage: &str,
    parse_args: impl FnOnce(&[String]) -> Result<Option<O>, String>,
    run: impl FnOnce(&O) -> Result<(), String>,
) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse_args(&args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{usage}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n\n{usage}");
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

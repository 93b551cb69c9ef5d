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

/// A command line read one option at a time: `--name value`,
/// `--name=value`, or a bare flag.
pub struct Args<'a> {
    rest: std::slice::Iter<'a, String>,
    /// The current option's name.
    name: &'a str,
    /// What followed `=` in the current option, until a value takes it.
    inline: Option<&'a str>,
}

impl<'a> Args<'a> {
    /// The arguments without the program name.
    pub fn new(args: &'a [String]) -> Self {
        Args {
            rest: args.iter(),
            name: "",
            inline: None,
        }
    }

    /// The next option's name (anything that is not a value of the one
    /// before).
    pub fn next_option(&mut self) -> Option<&'a str> {
        let arg = self.rest.next()?;
        (self.name, self.inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg.as_str(), None),
        };
        Some(self.name)
    }

    /// The current option's next value: what followed `=`, then the
    /// arguments after it. `what` names it in the error.
    pub fn value(&mut self, what: &str) -> Result<&'a str, String> {
        self.inline
            .take()
            .or_else(|| self.rest.next().map(String::as_str))
            .ok_or_else(|| format!("{} needs {what}", self.name))
    }

    /// The current option's value as a positive whole number (`_` may
    /// separate digits).
    pub fn count(&mut self, what: &str) -> Result<u64, String> {
        let text = self.value(what)?;
        match text.replace('_', "").parse() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{} takes a positive whole number, not `{text}`",
                self.name
            )),
        }
    }
}

//! `cosine`: the command line of the Cosine self-designing key-value engine.
//!
//! Every error is printed as one line on stderr with exit code 2; nothing panics on bad input.

mod bench_cmd;
mod commands;
mod explore;
mod generate_cmd;
mod learn_cmd;
mod plot;
mod rebalance_cmd;
mod search_cmd;
mod serve_cmd;
mod validate_cmd;

use clap::error::ErrorKind;
use clap::Parser;

fn main() {
    // a reader that goes away (`cosine search ... | head`) ends the process quietly, as it does any Unix filter,
    // instead of a panic on the next print
    #[cfg(unix)]
    // SAFETY: restoring the default action of SIGPIPE before any thread starts
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match commands::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            e.exit()
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            std::process::exit(2);
        }
        Err(e) => {
            // clap's message without its "For more information" trailer: one line.
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("invalid arguments");
            let first = first.trim_start_matches("error: ");
            // "the following required arguments were not provided:" names them on the next line
            let first = match (first.ends_with(':'), lines.next()) {
                (true, Some(next)) => format!("{first} {next}"),
                _ => first.to_string(),
            };
            eprintln!("error: {first} (see cosine --help)");
            std::process::exit(2);
        }
    };
    if let Err(e) = commands::run(cli) {
        let msg = format!("{e:#}").replace('\n', " ");
        eprintln!("error: {msg}");
        std::process::exit(2);
    }
}

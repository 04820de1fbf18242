//! `cosine`: the command line of the Cosine self-designing key-value engine.
//!
//! Every error is printed as one line on stderr with exit code 2; nothing panics on bad input.

// the grammar and the dispatch: the one module that names the commands
mod commands;

// the commands, one module each; they import only the helper modules below, never one another
mod adversary_cmd;
mod bench_cmd;
mod compare_cmd;
mod cost_cmd;
mod endure_cmd;
mod explore;
mod export_cmd;
mod generate_cmd;
mod learn_cmd;
mod profile_cmd;
mod rebalance_cmd;
mod search_cmd;
mod serve_cmd;
mod validate_cmd;
mod verify_cmd;

// helpers the commands share
mod describe;
mod plot;
mod search_args;
mod ycsb_args;

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

//! `steps101`: the steps of `steps_program`, as many as `./steps101.input.txt` says.

fn main() -> std::process::ExitCode {
    steps_program::main("./steps101.input.txt")
}

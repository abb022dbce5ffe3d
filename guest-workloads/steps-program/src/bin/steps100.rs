//! `steps100`: the steps of `steps_program`, as many as `./steps100.input.txt` says.

fn main() -> std::process::ExitCode {
    steps_program::main("./steps100.input.txt")
}

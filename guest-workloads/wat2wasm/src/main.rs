//! `wat2wasm IN.wat OUT.wasm`: the bundled workloads written in WAT, turned
//! into binary modules by the `wat` crate (the parser wasmtime uses), for
//! `build.sh`. The output depends only on the text: no names section is
//! kept beyond what the text declares, and no path is embedded.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: wat2wasm IN.wat OUT.wasm");
        return ExitCode::from(2);
    };
    let bytes = match wat::parse_file(input) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{input}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(output, bytes) {
        eprintln!("{output}: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

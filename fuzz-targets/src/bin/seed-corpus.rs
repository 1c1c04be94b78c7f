//! `cargo run -p conform-fuzz-targets --bin seed-corpus [DIR]`: writes the seed corpora
//! generated from the golden vectors into `DIR` (default `fuzz/corpus`), one folder per
//! target, for `cargo fuzz run <target>`.

fn main() -> std::process::ExitCode {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/corpus".into());
    let corpora = conform_fuzz_targets::seeds::from_vectors(
        &conform::engine::protocol::default_vectors_dir(),
    );
    match conform_fuzz_targets::seeds::write(&corpora, std::path::Path::new(&dir)) {
        Ok(n) => {
            println!("{n} seeds written under {dir}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("writing the seed corpora under {dir}: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

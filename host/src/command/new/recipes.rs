//! The scaffolds written from templates (`templates/<lang>/`): C, Zig,
//! AssemblyScript and Go (workloads) and a Go program. Each is a folder named
//! after the workload holding its source, a `build.sh` that builds
//! `<name>.wasm` beside it with that language's usual toolchain, and a
//! README; `{{name}}` in a template becomes the workload's name.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Lang, Scaffold, make_folder, shell_path, under, write_new};

/// One file of a template: where it goes in the folder (`{{name}}`
/// replaced) and what it holds.
struct Template {
    path: &'static str,
    text: &'static str,
}

const fn file(path: &'static str, text: &'static str) -> Template {
    Template { path, text }
}

const C: &[Template] = &[
    file("{{name}}.c", include_str!("templates/c/workload.c")),
    file("build.sh", include_str!("templates/c/build.sh")),
    file("README.md", include_str!("templates/c/README.md")),
];

const ZIG: &[Template] = &[
    file("{{name}}.zig", include_str!("templates/zig/workload.zig")),
    file("build.sh", include_str!("templates/zig/build.sh")),
    file("README.md", include_str!("templates/zig/README.md")),
];

const ASSEMBLYSCRIPT: &[Template] = &[
    file(
        "{{name}}.ts",
        include_str!("templates/assemblyscript/workload.ts"),
    ),
    file(
        "package.json",
        include_str!("templates/assemblyscript/package.json"),
    ),
    file(
        "build.sh",
        include_str!("templates/assemblyscript/build.sh"),
    ),
    file(
        "README.md",
        include_str!("templates/assemblyscript/README.md"),
    ),
    file(".gitignore", "/node_modules\n"),
];

const GO: &[Template] = &[
    file(
        "{{name}}.go",
        include_str!("templates/go-workload/workload.go"),
    ),
    file("go.mod", include_str!("templates/go-workload/go.mod")),
    file("build.sh", include_str!("templates/go-workload/build.sh")),
    file("README.md", include_str!("templates/go-workload/README.md")),
];

const GO_PROGRAM: &[Template] = &[
    file("main.go", include_str!("templates/go/main.go")),
    file("go.mod", include_str!("templates/go/go.mod")),
    file("{{name}}.input.txt", include_str!("templates/go/input.txt")),
    file("build.sh", include_str!("templates/go/build.sh")),
    file("README.md", include_str!("templates/go/README.md")),
];

/// The templates of `lang`, if it is written from templates.
fn templates(lang: Lang) -> Option<&'static [Template]> {
    match lang {
        Lang::C => Some(C),
        Lang::Zig => Some(ZIG),
        Lang::AssemblyScript => Some(ASSEMBLYSCRIPT),
        Lang::Go => Some(GO),
        Lang::GoProgram => Some(GO_PROGRAM),
        Lang::Rust | Lang::Wat => None,
    }
}

/// Write the folder `parent/name/` of a templated language; nothing is left
/// behind when a file cannot be written.
pub(super) fn create_from_templates(name: &str, lang: Lang, parent: &Path) -> Result<Scaffold> {
    let templates = templates(lang).context("not a templated language")?;
    let dir = under(parent, name);
    make_folder(&dir)?;
    let written = write_templates(name, templates, &dir);
    if written.is_err() {
        // The folder is ours (create_dir just made it): leave nothing half-done.
        let _ = fs::remove_dir_all(&dir);
    }
    Ok(Scaffold {
        files: written?,
        build_command: shell_path(&dir.join("build.sh")),
        run_command: format!("host run {}", shell_path(&dir.join(format!("{name}.wasm")))),
    })
}

fn write_templates(name: &str, templates: &[Template], dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for template in templates {
        let path = dir.join(template.path.replace("{{name}}", name));
        write_new(&path, &template.text.replace("{{name}}", name))?;
        if template.path.ends_with(".sh") {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
                .with_context(|| format!("making `{}` executable", path.display()))?;
        }
        files.push(path);
    }
    Ok(files)
}

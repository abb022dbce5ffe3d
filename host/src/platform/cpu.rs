//! Facts about the processor this process runs on: which cores the calling
//! thread may use, and the CPU's model as the OS names it.
//!
//! Both the run header and `host doctor` read them from here, so the two
//! never disagree. This module only reads; it pins and prioritises nothing.

/// The cores the calling thread may run on (`sched_getaffinity`), if the OS
/// says.
#[cfg(target_os = "linux")]
pub fn thread_affinity() -> Option<Vec<usize>> {
    // SAFETY: `set` is a zeroed cpu_set_t of the size passed, owned by us and
    // alive for the call; pid 0 is the calling thread.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        set
    };
    Some(
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `i` is below CPU_SETSIZE, inside the set.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .collect(),
    )
}

/// The cores the calling thread may run on: not exposed off Linux.
#[cfg(not(target_os = "linux"))]
pub fn thread_affinity() -> Option<Vec<usize>> {
    None
}

/// The CPU's model, as the OS reports it in `/proc/cpuinfo`.
pub fn cpu_model() -> Option<String> {
    let info = crate::util::fs::read_system_text("/proc/cpuinfo")?;
    model_from_cpuinfo(&info)
}

/// Keys of `/proc/cpuinfo` that name the CPU, most telling first: x86
/// (`model name`), older ARM kernels (`Processor`), boards that name
/// themselves (`Model`), MIPS (`cpu model`), ARM SoCs (`Hardware`), RISC-V
/// (`uarch`), POWER (`cpu`).
const MODEL_KEYS: [&str; 7] = [
    "model name",
    "Processor",
    "Model",
    "cpu model",
    "Hardware",
    "uarch",
    "cpu",
];

/// The CPU's model from the text of `/proc/cpuinfo`: the first of
/// the keys of `MODEL_KEYS` with a value, else, on ARM, the core named from its
/// `CPU implementer` and `CPU part` numbers.
pub fn model_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    MODEL_KEYS
        .iter()
        .find_map(|key| cpuinfo_value(cpuinfo, key))
        .or_else(|| arm_core(cpuinfo))
}

/// The first non-empty value of a `key : value` line.
fn cpuinfo_value(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
    })
}

/// Some ARM cores by (implementer, part), as the kernel numbers them; the
/// names are those of the vendors' reference manuals.
const ARM_CORES: [(u32, u32, &str); 16] = [
    (0x41, 0xd03, "ARM Cortex-A53"),
    (0x41, 0xd04, "ARM Cortex-A35"),
    (0x41, 0xd05, "ARM Cortex-A55"),
    (0x41, 0xd07, "ARM Cortex-A57"),
    (0x41, 0xd08, "ARM Cortex-A72"),
    (0x41, 0xd09, "ARM Cortex-A73"),
    (0x41, 0xd0a, "ARM Cortex-A75"),
    (0x41, 0xd0b, "ARM Cortex-A76"),
    (0x41, 0xd0c, "ARM Neoverse-N1"),
    (0x41, 0xd0d, "ARM Cortex-A77"),
    (0x41, 0xd40, "ARM Neoverse-V1"),
    (0x41, 0xd41, "ARM Cortex-A78"),
    (0x41, 0xd49, "ARM Neoverse-N2"),
    (0x41, 0xd4f, "ARM Neoverse-V2"),
    (0x41, 0xd8e, "ARM Neoverse-N3"),
    (0xc0, 0xac3, "Ampere-1"),
];

/// An ARM core named from its implementer and part numbers; an unknown pair
/// is given as its numbers.
fn arm_core(cpuinfo: &str) -> Option<String> {
    let implementer = cpuinfo_value(cpuinfo, "CPU implementer")?;
    let part = cpuinfo_value(cpuinfo, "CPU part")?;
    let number = |text: &str| u32::from_str_radix(text.trim_start_matches("0x"), 16).ok();
    let known = ARM_CORES
        .iter()
        .find(|(i, p, _)| Some(*i) == number(&implementer) && Some(*p) == number(&part));
    Some(match known {
        Some((_, _, name)) => name.to_string(),
        None => format!("ARM implementer {implementer} part {part}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: &str = "\
processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 85
model name\t: Intel(R) Xeon(R) Processor
stepping\t: 7
cpu MHz\t\t: 2999.998
flags\t\t: fpu vme de pse tsc msr hypervisor

processor\t: 1
model name\t: Intel(R) Xeon(R) Processor
";

    const GRAVITON2: &str = "\
processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1
";

    const RASPBERRY_PI: &str = "\
processor\t: 0
BogoMIPS\t: 108.00
CPU implementer\t: 0x41
CPU part\t: 0xd08

Hardware\t: BCM2835
Revision\t: c03114
Model\t\t: Raspberry Pi 4 Model B Rev 1.4
";

    const OLD_ARM: &str = "\
Processor\t: ARMv7 Processor rev 10 (v7l)
processor\t: 0
BogoMIPS\t: 790.52
Hardware\t: Freescale i.MX 6Quad/DualLite (Device Tree)
";

    #[test]
    fn x86_is_named_by_its_model_name() {
        assert_eq!(
            model_from_cpuinfo(X86).as_deref(),
            Some("Intel(R) Xeon(R) Processor")
        );
    }

    #[test]
    fn arm_without_a_model_name_is_named_by_its_core() {
        assert_eq!(
            model_from_cpuinfo(GRAVITON2).as_deref(),
            Some("ARM Neoverse-N1")
        );
        let unknown = GRAVITON2.replace("0xd0c", "0xfff");
        assert_eq!(
            model_from_cpuinfo(&unknown).as_deref(),
            Some("ARM implementer 0x41 part 0xfff")
        );
    }

    #[test]
    fn arm_boards_and_older_kernels_name_themselves() {
        assert_eq!(
            model_from_cpuinfo(RASPBERRY_PI).as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(
            model_from_cpuinfo(OLD_ARM).as_deref(),
            Some("ARMv7 Processor rev 10 (v7l)")
        );
    }

    #[test]
    fn nothing_to_name_is_none_and_empty_values_are_skipped() {
        assert_eq!(model_from_cpuinfo(""), None);
        assert_eq!(model_from_cpuinfo("processor\t: 0\nmodel name\t:\n"), None);
        assert_eq!(
            model_from_cpuinfo("model name\t:\nuarch\t\t: sifive,u74-mc\n").as_deref(),
            Some("sifive,u74-mc")
        );
    }

    #[test]
    fn the_calling_thread_may_run_somewhere() {
        if cfg!(target_os = "linux") {
            let cores = thread_affinity().expect("sched_getaffinity answers on Linux");
            assert!(!cores.is_empty());
        }
    }
}

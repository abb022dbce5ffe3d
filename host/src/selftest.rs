pub fn selftest(_a: &crate::cli::SelftestArgs) -> anyhow::Result<()> { anyhow::bail!("selftest: not written yet") }

//! tinywasm's memories held to `--max-memory` within a call: a linear
//! memory (tinywasm's own `VecMemory`) that refuses to grow past the
//! limit, so that the guest's `memory.grow` returns -1 as under the other
//! runtimes.

use tinywasm::engine::Config;
use tinywasm::{LinearMemory, MemoryBackend, Trap, VecMemory};

/// A memory of at most `max` bytes.
pub struct Limited {
    inner: VecMemory,
    max: usize,
}

impl Limited {
    /// tinywasm's default configuration, its memories of at most
    /// `max_bytes` each.
    pub fn config(max_bytes: usize) -> Config {
        let backend = MemoryBackend::custom(move |ty| {
            let initial = usize::try_from(ty.initial_size()).unwrap_or(usize::MAX);
            if initial > max_bytes {
                return Err(tinywasm::Error::Trap(Trap::OutOfMemory));
            }
            let inner = VecMemory::try_new(initial).map_err(tinywasm::Error::Trap)?;
            Ok(Limited {
                inner,
                max: max_bytes,
            })
        });
        Config::new().with_memory_backend(backend)
    }
}

impl LinearMemory for Limited {
    fn len(&self) -> usize {
        self.inner.len()
    }

    fn grow_to(&mut self, new_len: usize) -> Result<(), Trap> {
        if new_len > self.max {
            return Err(Trap::OutOfMemory);
        }
        self.inner.grow_to(new_len)
    }

    fn read(&self, addr: usize, dst: &mut [u8]) -> usize {
        self.inner.read(addr, dst)
    }

    fn write(&mut self, addr: usize, src: &[u8]) -> usize {
        self.inner.write(addr, src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinywasm::{ModuleInstance, Store};

    /// `memory.grow(64)` (4 MiB) from a memory of one page, as `run`.
    const GROW: &str = r#"(module (memory 1)
        (func (export "run") (param i64 i64) (result i64)
          (i64.extend_i32_s (memory.grow (i32.const 64)))))"#;

    fn grow_under(max_bytes: usize) -> anyhow::Result<i64> {
        let bytes = wat::parse_str(GROW)?;
        let mut store = Store::new(tinywasm::Engine::new(Limited::config(max_bytes)));
        let module = tinywasm::parse_bytes(&bytes)?;
        let instance = ModuleInstance::instantiate(&mut store, &module, None)?;
        let run = instance.func::<(i64, i64), i64>(&store, "run")?;
        Ok(run.call(&mut store, (1, 2))?)
    }

    #[test]
    fn a_growth_past_the_limit_returns_minus_one_within_the_call() -> anyhow::Result<()> {
        assert_eq!(grow_under(2 << 20)?, -1);
        assert_eq!(grow_under(64 << 20)?, 1);
        Ok(())
    }
}

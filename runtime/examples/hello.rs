//! Every rank says hello; rank 0 collects the greetings in rank order.

fn main() -> std::process::ExitCode {
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let me = world.rank();
        let line = format!("hello from rank {me} of {}", world.size());
        if me == 0 {
            println!("{line}");
            for src in 1..world.size() {
                let (bytes, _) = world.recv_vec::<u8>(src, 0)?;
                println!("{}", String::from_utf8_lossy(&bytes));
            }
        } else {
            world.send(line.as_bytes(), 0, 0)?;
        }
        Ok(())
    })
}

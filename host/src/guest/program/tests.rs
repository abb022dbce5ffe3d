//! Tests of programs: comparing what a program wrote with what was expected.

use super::output::check_output;
use super::*;

#[test]
fn output_is_compared_line_by_line() {
    assert!(same_lines(b"0\n", b"0"));
    assert!(same_lines(b"one\r\ntwo\r\n", b"one\ntwo\n"));
    assert!(same_lines(b"", b""));
    assert!(!same_lines(b"0\n", b"1"));
    assert!(!same_lines(b"a\n\nb", b"a\nb"));
    assert!(!same_lines(b"a\nb\n", b"a\n"));
    let error = check_output("stdout", b"a\nb\n", Some(b"a\nc")).expect_err("differs");
    assert_eq!(
        error.to_string(),
        "stdout differs from the expected output at line 2: got `b`, expected `c`"
    );
    let error = check_output("stdout", b"a\n", Some(b"a\nc")).expect_err("differs");
    assert!(
        error
            .to_string()
            .contains("got `(end of output)`, expected `c`")
    );
    assert!(check_output("stdout", b"anything", None).is_ok());
}

from dotenv import dotenv_values, set_key


def test_a_new_key_goes_on_its_own_line_without_a_final_newline(tmp_path):
    env = tmp_path / ".env"
    env.write_text("DEBUG=1")
    assert set_key(env, "PORT", "8000") == (True, "PORT", "8000")
    assert env.read_text() == "DEBUG=1\nPORT='8000'\n"
    assert dict(dotenv_values(env)) == {"DEBUG": "1", "PORT": "8000"}


def test_files_with_a_final_newline_and_existing_keys_are_unchanged(tmp_path):
    env = tmp_path / ".env"
    env.write_text("DEBUG=1\n")
    set_key(env, "PORT", "8000")
    assert env.read_text() == "DEBUG=1\nPORT='8000'\n"
    env.write_text("DEBUG=1\nPORT=80")
    set_key(env, "DEBUG", "0")
    assert env.read_text() == "DEBUG='0'\nPORT=80"

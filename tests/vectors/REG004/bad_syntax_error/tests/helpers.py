def broken(:  # [REG004]
    pass

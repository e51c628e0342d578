def add(a, b):
    return a + b


def div(a, b):
    return a / b

# livegain: `make demo` and `make test` do all their own set-up on Debian/Ubuntu.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
APT := $(shell command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo) apt-get

.PHONY: demo test lint typecheck unit system-deps engine broker browser venv clean help

help:
	@echo "make demo   - set up and run the live demo (prints the URL to open)"
	@echo "make test   - set up and run ruff, mypy --strict and the full test suite"

$(STAMP): pyproject.toml
	@test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@# bytecode now, as pip does for an installed wheel (PYTHONDONTWRITEBYTECODE
	@# would otherwise leave every run compiling the package: 0.3 s of start-up)
	$(BIN)/python -m compileall -q livegain
	@touch $(STAMP)

venv: $(STAMP)

# System parts, each installed with apt-get only when missing.
apt-updated:
	@$(APT) update -qq

engine:
	@command -v stockfish >/dev/null 2>&1 || test -x /usr/games/stockfish || \
	  { $(APT) update -qq && DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq stockfish; }

broker:
	@command -v mosquitto >/dev/null 2>&1 || test -x /usr/sbin/mosquitto || \
	  { $(APT) update -qq && DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq mosquitto; }
	@command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy || \
	  { $(APT) update -qq && DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq haproxy; }
	@$(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 1883), 1)" 2>/dev/null || \
	  { (test -f /etc/mosquitto/mosquitto.conf && mosquitto -d -c /etc/mosquitto/mosquitto.conf) || mosquitto -d; sleep 1; }

browser:
	@test -x /usr/bin/chromium || \
	  { $(APT) update -qq && DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq chromium; }

system-deps: engine broker browser

lint: $(STAMP)
	$(BIN)/ruff check livegain tests bench
	$(BIN)/ruff format --check livegain tests bench

typecheck: $(STAMP)
	$(BIN)/mypy --strict livegain

unit: $(STAMP)
	$(BIN)/pytest -q -m "not engine and not broker and not browser"

test: $(STAMP) system-deps lint typecheck
	$(BIN)/pytest -q -ra

demo: $(STAMP) engine
	$(BIN)/livegain demo $(DEMO_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache

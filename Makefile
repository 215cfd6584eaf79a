# pyshader_tx build/test entry points. Every target is idempotent and quick once set up.
#
#   make test         system packages + .venv + Tint + Dawn's Mesa, then black --check and pytest
#   make dawn-deps    unpack Mesa 25's lavapipe (bookworm-backports) into tools/dawn/mesa for Dawn
#   make demo         run examples/demo.py
#   make examples     run every example of the gallery (pictures in examples/output)
#   make gallery      make examples, then the README's thumbnails and table from them
#   make web-example  write examples/web/mandelbrot.js for the page (python -m http.server -d examples/web)
#   make golden       rewrite the expected outputs of tests/golden
#   make format       black the tree
#   make clean        remove .venv, tools/tint/node_modules and build outputs

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV := .venv
VENV_STAMP := $(VENV)/.installed.stamp
TINT_DIR := tools/tint
TINT_STAMP := $(TINT_DIR)/node_modules/.installed.stamp
# Dawn (dawn.node, the tests' fifth executor) refuses Debian 12's Mesa 22 lavapipe: Mesa 25's,
# from bookworm-backports, is unpacked here (not installed; the system keeps its Mesa).
DAWN_DIR := tools/dawn
DAWN_STAMP := $(DAWN_DIR)/mesa/.installed.stamp

# Debian packages: Mesa lavapipe (a CPU Vulkan driver for wgpu and the native Vulkan host), the
# Vulkan loader (libvulkan1, which the `vulkan` Python package binds) and its validation layer
# (the tests validate every native launch), and spirv-val/spirv-as.
APT_PACKAGES := mesa-vulkan-drivers libvulkan1 vulkan-validationlayers spirv-tools spirv-headers
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

# Without it Mesa warns on every device creation.
XDG_RUNTIME_DIR ?= /tmp/pyshader_tx-xdg-$(shell id -u)
export XDG_RUNTIME_DIR

.PHONY: all system-deps venv node-deps dawn-deps deps web-example test demo examples gallery golden format clean spirv-grammar

all: test

system-deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg -s "$$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

venv: $(VENV_STAMP)

$(VENV_STAMP): pyproject.toml
	@[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q -e '.[dev,examples]'
	@touch $@

node-deps: $(TINT_STAMP)

# node and npm (Tint and Dawn through dawn.node) come with the machine, else from Debian.
$(TINT_STAMP): $(TINT_DIR)/package.json $(TINT_DIR)/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  echo "Installing Debian packages: nodejs npm"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm; }
	cd $(TINT_DIR) && npm ci --no-audit --no-fund
	@touch $@

dawn-deps: $(DAWN_STAMP)

$(DAWN_STAMP): $(DAWN_DIR)/fetch_mesa.sh | system-deps
	$(DAWN_DIR)/fetch_mesa.sh
	@touch $@

deps: system-deps venv node-deps dawn-deps

$(XDG_RUNTIME_DIR):
	@mkdir -p -m 700 $@

test: deps | $(XDG_RUNTIME_DIR)
	$(VENV)/bin/black --check .
	$(VENV)/bin/pytest -q

demo: deps | $(XDG_RUNTIME_DIR)
	$(VENV)/bin/python examples/demo.py

examples: deps | $(XDG_RUNTIME_DIR)
	@for f in examples/[a-z]*.py; do echo "== $$f"; $(VENV)/bin/python "$$f"; done

gallery: examples
	$(VENV)/bin/python tools/gallery.py

web-example: venv
	$(VENV)/bin/pyshader-tx examples/mandelbrot.py --kernel mandelbrot --target js --target d.ts \
	  -o examples/web
	@echo "serve it: python3 -m http.server -d examples/web (then open http://localhost:8000)"

golden: deps | $(XDG_RUNTIME_DIR)
	$(VENV)/bin/pytest -q tests/golden --update-goldens

format: venv
	$(VENV)/bin/black .

clean:
	rm -rf $(VENV) $(TINT_DIR)/node_modules $(DAWN_DIR)/mesa build *.egg-info

# Regenerate backend_spirv/grammar.py from the Khronos grammar JSON that spirv-headers installs.
spirv-grammar: system-deps venv
	$(VENV)/bin/python tools/generate_spirv_grammar.py

# SPDX-License-Identifier: Apache-2.0
"""The version of mtier this package belongs to: configure.ac's AC_INIT
version (configure stops when the two differ)."""

__version__ = "0.2.0"

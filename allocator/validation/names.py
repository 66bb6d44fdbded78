"""Names as the API server checks them: DNS labels and subdomains, label keys and values, driver
names, fully qualified names, object metadata.
"""

from __future__ import annotations

import re

from .limits import MAX_DRIVER_NAME, MAX_ID_LENGTH
from .problems import Problems

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dns_label(name: str, path: str, problems: Problems) -> None:
    if len(name) > 63:
        problems.invalid(path, name, "must be no more than 63 characters")
    if not DNS_LABEL.fullmatch(name):
        problems.invalid(path, name, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                                     "or '-', and must start and end with an alphanumeric character (e.g. 'my-name')")


def dns_subdomain(name: str, path: str, problems: Problems, limit: int = 253) -> None:
    if len(name) > limit:
        problems.invalid(path, name, f"must be no more than {limit} characters")
    if not DNS_SUBDOMAIN.fullmatch(name):
        problems.invalid(path, name, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                     "characters, '-' or '.', and must start and end with an alphanumeric character "
                                     "(e.g. 'example.com')")


def label_key(key: str, path: str, problems: Problems) -> None:
    """metav1validation.ValidateLabelName: [prefix/]name."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        problems.invalid(path, key, "a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
                                    "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
        return
    if prefix or key.startswith("/"):
        dns_subdomain(prefix, path, problems)
    if not name or len(name) > 63 or not _LABEL_NAME.fullmatch(name):
        problems.invalid(path, key, "name part must consist of at most 63 alphanumeric characters, '-', '_' or '.', "
                                    "and must start and end with an alphanumeric character (e.g. 'MyName')")


def label_value(value: str, path: str, problems: Problems) -> None:
    if value and (len(value) > 63 or not _LABEL_NAME.fullmatch(value)):
        problems.invalid(path, value, "a valid label value must be an empty string or at most 63 alphanumeric "
                                      "characters, '-', '_' or '.', starting and ending with an alphanumeric character")


def driver_name(name: str, path: str, problems: Problems) -> None:
    """ValidateCSIDriverName: the rules for a DRA driver's name."""
    if not name:
        problems.required(path)
        return
    if len(name) > MAX_DRIVER_NAME:
        problems.invalid(path, name, f"must be no more than {MAX_DRIVER_NAME} characters")
    elif not DNS_SUBDOMAIN.fullmatch(name.lower()):
        problems.invalid(path, name, "a DNS subdomain must consist of alphanumeric characters, '-' or '.', and "
                                     "must start and end with an alphanumeric character (e.g. 'gpu.example.com')")


def fully_qualified_name(name: str, path: str, problems: Problems) -> None:
    """validateFullyQualifiedName: a driver-style domain, '/', and a C identifier."""
    domain, slash, ident = name.partition("/")
    if not slash:
        problems.invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash")
        return
    if "/" in ident:
        problems.invalid(path, name, "must not contain more than one slash")
        return
    if not domain:
        problems.invalid(path, "", "the domain must not be empty")
    else:
        driver_name(domain, path, problems)
    if not ident:
        problems.invalid(path, "", "the name must not be empty")
    elif len(ident) > MAX_ID_LENGTH:
        problems.invalid(path, ident, f"must be no more than {MAX_ID_LENGTH} characters")
    elif not _C_IDENTIFIER.fullmatch(ident):
        problems.invalid(path, ident, "a valid C identifier must start with alphabetic character or '_', "
                                      "followed by a string of alphanumeric characters or '_'")


def validate_metadata(meta: dict, path: str, problems: Problems, namespaced: bool, named: bool = True) -> None:
    if named:
        name = meta.get("name")
        if not name:
            problems.required(f"{path}.name", "name or generateName is required")
        else:
            dns_subdomain(name, f"{path}.name", problems)
    namespace = meta.get("namespace")
    if namespaced and namespace:
        dns_label(namespace, f"{path}.namespace", problems)
    for key, value in (meta.get("labels") or {}).items():
        label_key(key, f"{path}.labels", problems)
        label_value(value or "", f"{path}.labels", problems)
    for key in meta.get("annotations") or {}:
        label_key(key, f"{path}.annotations", problems)

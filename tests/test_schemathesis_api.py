"""Schemathesis drives every operation in the real server's ``/openapi.json`` with generated input.

The server is a real ``searchnasa serve`` over the sample plus one SYNTHETIC hostile record. Each
generated request must answer without a server error, with a status and content type the spec
declares, a body matching the declared schema, and (for every 4xx) the one JSON error shape. The
run is bounded (a few dozen examples per operation) so it stays well under a minute on 2 cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from server_util import Server, build_web_home, copy_home, running_server

REQUEST_TIMEOUT = 10.0  # a request that takes longer than this counts as a hang
EXAMPLES = 30  # per operation


@pytest.fixture(scope="module")
def server(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    base = tmp_path_factory.mktemp("schemathesis")
    home = copy_home(build_web_home(tmp_path_factory.getbasetemp(), sample_home), base / "home")
    with running_server(home, base / "server.log") as srv:
        yield srv


POSITIVE_CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
                   response_schema_conformance]
NEGATIVE_CHECKS = [not_a_server_error, negative_data_rejection, status_code_conformance,
                   content_type_conformance]


def check_case(case, server: Server, mode: GenerationMode) -> None:
    response = case.call(base_url=server.base_url, timeout=REQUEST_TIMEOUT)
    case.validate_response(response, checks=POSITIVE_CHECKS if mode is GenerationMode.POSITIVE
                           else NEGATIVE_CHECKS)
    assert response.status_code < 500, (case.path, response.status_code, response.text[:300])
    assert "Traceback" not in response.text
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body


def test_every_operation_answers_per_spec(server: Server) -> None:
    """Loads the spec the running server publishes, then fuzzes each of its operations in turn.

    (Schemathesis' pytest fixture loader does not work with this pytest version, so the
    operations are driven through Hypothesis directly: the same generated cases and checks.)
    """
    api = schemathesis.openapi.from_url(server.base_url + "/openapi.json")
    operations = [result.ok() for result in api.get_all_operations()]
    labels = sorted(op.label for op in operations)
    assert "GET /api/search" in labels and "POST /api/related" in labels, labels
    sent = 0
    for operation in operations:
        raw = operation.definition.raw
        takes_input = bool(raw.get("parameters") or raw.get("requestBody"))
        modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if takes_input else (GenerationMode.POSITIVE,)
        for mode in modes:
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def fuzz(case) -> None:
                nonlocal sent
                sent += 1
                check_case(case, server, mode)

            fuzz()
    assert sent >= len(operations) * EXAMPLES, sent  # every operation was really exercised


def test_server_log_has_no_stack_trace(server: Server) -> None:
    """Runs after the generated requests (same module): nothing reached the last line of defence."""
    log = server.log()
    assert '"event":"request"' in log.replace(" ", "")
    assert "Traceback" not in log and "unhandled error" not in log

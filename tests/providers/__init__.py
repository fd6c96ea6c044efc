"""Tests of the model-provider layer, against the real SDKs and a local stub server."""

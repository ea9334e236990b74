package io.pidpool.server.zk;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;

/** Translates ZooKeeper result codes into {@link PidPoolException}: the one place that knows both. */
public final class ZkErrors {
    private ZkErrors() {}

    public static PidPoolException translate(int rc, String what) {
        return translate(Code.get(rc), what, null);
    }

    public static PidPoolException translate(KeeperException e, String what) {
        return translate(e.code(), what, e);
    }

    public static PidPoolException translate(Code code, String what, Throwable cause) {
        String message = what + ": " + code;
        return switch (code) {
            case NODEEXISTS, BADVERSION, NOTEMPTY -> new PidPoolException(ErrorCode.CONFLICT, null, message, cause);
            case NONODE -> new PidPoolException(ErrorCode.NOT_FOUND, null, message, cause);
            case SESSIONEXPIRED, SESSIONMOVED ->
                new PidPoolException(ErrorCode.FENCED, null, message + " (this session is gone)", cause);
            case NOAUTH, AUTHFAILED -> new PidPoolException(ErrorCode.FORBIDDEN, null, message, cause);
            case BADARGUMENTS, INVALIDACL, NOCHILDRENFOREPHEMERALS ->
                new PidPoolException(ErrorCode.INVALID_ARGUMENT, null, message, cause);
            // connection loss and timeouts leave the outcome unknown: the caller must re-read
            default -> new PidPoolException(ErrorCode.UNAVAILABLE, null, message + " (outcome unknown)", cause);
        };
    }
}

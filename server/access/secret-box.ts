import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { authSecret, config } from '@/server/config';

/**
 * Secrets the app must read back (webhook signing secrets sign every delivery), stored so
 * that a database dump alone reveals nothing: AES-256-GCM under a key derived (HKDF-SHA256)
 * from WEBHOOK_ENCRYPTION_KEY, or from AUTH_SECRET when that is unset, so that the server,
 * the worker and the command line agree with nothing more configured (in development
 * AUTH_SECRET is the one generated under .data/). The row's id is bound in as associated
 * data: a ciphertext copied onto another row does not open there.
 *
 * Sealed form: `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url). The key id (8 hex digits of
 * the key's SHA-256) tells "encrypted under another key" apart from a corrupted value.
 */
export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

export interface SecretBox {
  seal(plain: string, context: string): string;
  open(sealed: string, context: string): string;
}

export function secretBox(keyMaterial: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', keyMaterial, 'contract-data-api', 'webhook-signing-secrets/v1', 32));
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', keyId, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, context) {
      const [version, id, iv, ciphertext, tag] = sealed.split('.');
      if (version !== 'v1' || !iv || ciphertext === undefined || !tag) throw new SecretBoxError('not a sealed secret');
      if (id !== keyId) {
        throw new SecretBoxError('sealed under another key: WEBHOOK_ENCRYPTION_KEY (or AUTH_SECRET, when it is unset) changed since; rotate the secret');
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('the sealed secret does not open (altered, or copied from another row)');
      }
    },
  };
}

let cached: { material: string; box: SecretBox } | undefined;

/** The process's box for webhook signing secrets, from the configuration. */
export function webhookSecretBox(): SecretBox {
  const material = config().webhooks.encryptionKey ?? authSecret();
  if (cached?.material !== material) cached = { material, box: secretBox(material) };
  return cached.box;
}
